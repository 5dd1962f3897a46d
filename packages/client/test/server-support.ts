/**
 * The one way the client's tests reach the server's test support (test/support/): a test server
 * on every backend, the test key, the repository's root, a TypeScript checker as an app's,
 * Chromium, and the TCP proxy that cuts connections or loses answers. Beside them, HTTP proxies in front of a
 * test server that break the way the web breaks: one that answers the first requests itself
 * (429, 503 with Retry-After), one that redirects.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { TcpProxy, type TcpProxyOptions } from '../../../test/support/tcp-proxy.js'

export { ROOT, TEST_KEY } from '../../../test/support/constants.js'
export { backends, startTestServer, type TestServer } from '../../../test/support/helper.js'
export { chromiumMissing, launchChromium } from '../../../test/support/chromium.js'
export { typeErrors } from '../../../test/support/type-errors.js'
export type { TcpProxy }

/**
 * A TcpProxy in front of the server at `origin`, and the API's base URL through it.
 * @example const { proxy, api } = await startTcpProxy(server.origin); proxy.resetAnswers(1)
 */
export async function startTcpProxy (origin: string, options: TcpProxyOptions = {}): Promise<{ proxy: TcpProxy, api: string }> {
  const target = new URL(origin)
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) }, options)
  return { proxy, api: `http://127.0.0.1:${proxy.port}/v1` }
}

export interface Injected {
  status: number
  code: string
  headers?: Record<string, string>
}

export interface FaultProxy {
  /** Base URL of the API through the proxy, ending in /v1. */
  api: string
  /** Requests seen so far. */
  seen: () => number
  /** The Idempotency-Key header of each request that reached the proxy. */
  idempotencyKeys: () => string[]
  close: () => Promise<void>
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
 * An HTTP proxy that hands each request, its body read, to `answer`, and counts the requests and
 * their Idempotency-Keys.
 */
async function startHttpProxy (answer: (request: IncomingMessage, body: Buffer, response: ServerResponse, index: number) => Promise<void>): Promise<FaultProxy> {
  let seen = 0
  const keys: string[] = []
  const server = createHttpServer(async (request, response) => {
    const body = await readBody(request)
    keys.push(String(request.headers['idempotency-key'] ?? ''))
    await answer(request, body, response, seen++)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    api: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`,
    seen: () => seen,
    idempotencyKeys: () => keys,
    close: async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) }
  }
}

/**
 * Answers the first requests with the injected errors, then forwards every request to `origin`;
 * an undefined entry forwards its request too.
 * @example const proxy = await startInjectingProxy(server.origin, [{ status: 503, code: 'unavailable', headers: { 'retry-after': '1' } }])
 * @example const proxy = await startInjectingProxy(server.origin, [undefined, refusal])   // the second request refused
 */
export async function startInjectingProxy (origin: string, injected: Array<Injected | undefined>): Promise<FaultProxy> {
  return await startHttpProxy(async (request, body, response, index) => {
    const fault = injected[index]
    if (fault === undefined) return await forward(`${origin}${request.url}`, request, body, response)
    response.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers })
    response.end(JSON.stringify({ code: fault.code, message: 'injected by the test proxy', status: fault.status }))
  })
}

/**
 * Redirects every request under /v1 with `status` to the same request under /v1/moved on its own
 * origin (so a client that follows keeps its Authorization header), and forwards those to `origin`.
 * @example const proxy = await startRedirectingProxy(server.origin, 301)
 */
export async function startRedirectingProxy (origin: string, status: number): Promise<FaultProxy> {
  return await startHttpProxy(async (request, body, response) => {
    const url = request.url!
    if (url.startsWith('/v1/moved/')) return await forward(`${origin}/v1/${url.slice('/v1/moved/'.length)}`, request, body, response)
    response.writeHead(status, { location: url.replace(/^\/v1\//, '/v1/moved/') })
    response.end()
  })
}
