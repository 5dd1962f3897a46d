/**
 * Proxies in front of a live test server that break the way networks break:
 * an HTTP proxy that answers the first requests itself (429, 503 with
 * Retry-After), one that redirects, and a TCP proxy that cuts a connection after the request reached
 * the server but before the response reached the client.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTcpServer, connect, type Server, type Socket } from 'node:net'

export interface Injected {
  status: number
  code: string
  headers?: Record<string, string>
}

export interface FaultProxy {
  /** Base URL of the API through the proxy, ending in /v1. */
  api: string
  /** Requests (HTTP proxy) or connections (TCP proxy) seen so far. */
  seen: () => number
  /** The Idempotency-Key header of each request that reached the proxy. */
  idempotencyKeys: () => string[]
  close: () => Promise<void>
}

async function listen (server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as { port: number }).port
}

async function readBody (request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function forward (target: string, request: IncomingMessage, body: Buffer, response: ServerResponse): Promise<void> {
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>
  const upstream = await fetch(target, { method: request.method, headers, body: body.length === 0 ? undefined : body, redirect: 'manual' })
  const answer = Buffer.from(await upstream.arrayBuffer())
  const out: Record<string, string> = {}
  upstream.headers.forEach((value, name) => { if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) out[name] = value })
  response.writeHead(upstream.status, out)
  response.end(answer)
}

/**
 * Answers the first requests with the injected errors, then forwards every request to `origin`.
 * @example const proxy = await startInjectingProxy(server.origin, [{ status: 503, code: 'unavailable', headers: { 'retry-after': '1' } }])
 */
export async function startInjectingProxy (origin: string, injected: Injected[]): Promise<FaultProxy> {
  let seen = 0
  const keys: string[] = []
  const server = createHttpServer(async (request, response) => {
    const body = await readBody(request)
    const fault = injected[seen++]
    keys.push(String(request.headers['idempotency-key'] ?? ''))
    if (fault !== undefined) {
      response.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers })
      response.end(JSON.stringify({ code: fault.code, message: 'injected by the test proxy', status: fault.status }))
      return
    }
    await forward(`${origin}${request.url}`, request, body, response)
  })
  const port = await listen(server)
  return {
    api: `http://127.0.0.1:${port}/v1`,
    seen: () => seen,
    idempotencyKeys: () => keys,
    close: async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) }
  }
}

/**
 * Redirects every request under /v1 with `status` to the same request under /v1/moved on its own
 * origin (so a client that follows keeps its Authorization header), and forwards those to `origin`.
 * @example const proxy = await startRedirectingProxy(server.origin, 301)
 */
export async function startRedirectingProxy (origin: string, status: number): Promise<FaultProxy> {
  let seen = 0
  const keys: string[] = []
  const server = createHttpServer(async (request, response) => {
    const body = await readBody(request)
    seen++
    keys.push(String(request.headers['idempotency-key'] ?? ''))
    const url = request.url!
    if (url.startsWith('/v1/moved/')) {
      await forward(`${origin}/v1/${url.slice('/v1/moved/'.length)}`, request, body, response)
      return
    }
    response.writeHead(status, { location: url.replace(/^\/v1\//, '/v1/moved/') })
    response.end()
  })
  const port = await listen(server)
  return {
    api: `http://127.0.0.1:${port}/v1`,
    seen: () => seen,
    idempotencyKeys: () => keys,
    close: async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) }
  }
}

/**
 * Forwards bytes to `origin`; on the first `dropped` connections that carry a POST, the
 * response never reaches the client: the connection is reset the moment the server answers.
 * @example const proxy = await startResettingProxy(server.origin, 1)
 */
export async function startResettingProxy (origin: string, dropped: number): Promise<FaultProxy> {
  const target = new URL(origin)
  let seen = 0
  let toDrop = dropped
  const keys: string[] = []
  const sockets = new Set<Socket>()
  const server = createTcpServer((client) => {
    seen++
    sockets.add(client)
    const upstream = connect(Number(target.port), target.hostname)
    sockets.add(upstream)
    let drop = false
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1')
      const key = /\r\nidempotency-key: *([^\r]*)\r\n/i.exec(text)?.[1]
      if (key !== undefined) keys.push(key)
      if (text.startsWith('POST ') && toDrop > 0) { toDrop--; drop = true }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (drop) { client.resetAndDestroy(); upstream.destroy(); return }
      client.write(chunk)
    })
    client.on('close', () => { upstream.destroy(); sockets.delete(client) })
    upstream.on('close', () => { client.destroy(); sockets.delete(upstream) })
    client.on('error', () => {})
    upstream.on('error', () => {})
  })
  const port = await listen(server)
  return {
    api: `http://127.0.0.1:${port}/v1`,
    seen: () => seen,
    idempotencyKeys: () => keys,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}
