import assert from 'node:assert/strict'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { after, before, describe, it } from 'node:test'
import Fastify, { type FastifyInstance } from 'fastify'
import { registerResponseBatching } from '../../src/http/plugins/response-batching.js'
import { sleepSync } from '../../src/sleep-sync.js'
import { TEST_KEY, startTestServer, type TestServer } from '../helper.js'
import { openRaw } from '../hardening/raw-http.js'

/**
 * Sends each request on its own connection, all read by the server in one turn; returns
 * what the server did, in order: `read X` when request X arrives, `written X` when its
 * response is written, `next turn` one turn of the event loop after the first was read.
 */
async function inOneTurn (server: Server, origin: string, requests: string[]): Promise<{ events: string[], statuses: number[] }> {
  const events: string[] = []
  let turnPassed!: () => void
  const nextTurn = new Promise<void>((resolve) => { turnPassed = resolve })
  // Before Fastify's listener, so a response written at once is seen too.
  const watch = (request: IncomingMessage, response: ServerResponse): void => {
    const name = request.headers['x-request-id']!
    if (events.length === 0) setImmediate(() => setImmediate(() => { events.push('next turn'); turnPassed() }))
    events.push(`read ${name}`)
    const writeHead = response.writeHead
    response.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
      events.push(`written ${name}`)
      return writeHead.apply(this, args)
    } as typeof writeHead
  }
  server.prependListener('request', watch)
  try {
    // The server must have taken every connection first: one it accepts in the same turn is read in the next.
    let accepted = 0
    const allAccepted = new Promise<void>((resolve) => {
      server.on('connection', function count () {
        if (++accepted < requests.length) return
        server.removeListener('connection', count)
        resolve()
      })
    })
    const connections = await Promise.all(requests.map(async () => await openRaw(origin)))
    await allAccepted
    connections.forEach((connection, index) => connection.write(requests[index]!))
    // Blocks this thread, server included, so what the clients sent meanwhile is read in one turn.
    sleepSync(100)
    const responses = await Promise.all(connections.map(async (connection) => await connection.response))
    await nextTurn
    return { events, statuses: responses.map((response) => response.status) }
  } finally {
    server.removeListener('request', watch)
  }
}

const request = (name: string, path: string, key = TEST_KEY, more = ''): string =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${name}\r\nAuthorization: Bearer ${key}\r\n${more}\r\n`

describe('responses of one turn of the event loop', () => {
  let server: TestServer
  before(async () => { server = await startTestServer() })
  after(async () => { await server?.close() })

  const send = async (requests: string[]): Promise<{ events: string[], statuses: number[] }> =>
    await inOneTurn(server.app.server, server.origin, requests)

  it('are written together after the last request of the turn is handled', async () => {
    const { events, statuses } = await send(['a', 'b', 'c'].map((name) => request(name, '/v1/pets?limit=5')))
    assert.deepEqual(statuses, [200, 200, 200])
    assert.deepEqual(events.filter((event) => event !== 'next turn'), ['read a', 'read b', 'read c', 'written a', 'written b', 'written c'])
  })

  it('holds errors answered at once (a 401 in an onRequest hook) the same way', async () => {
    const { events, statuses } = await send([request('a', '/v1/pets', 'wrong-key-0123456789'), request('b', '/v1/pets')])
    assert.deepEqual(statuses, [401, 200])
    assert.deepEqual(events.filter((event) => event !== 'next turn'), ['read a', 'read b', 'written a', 'written b'])
  })

  it('answers a lone request before the next turn', async () => {
    const { events, statuses } = await send([request('a', '/v1/pets')])
    assert.deepEqual(statuses, [200])
    assert.deepEqual(events, ['read a', 'written a', 'next turn'])
  })
})

// A response that is never written would hang its test: each fails after 10 s instead.
describe('response batching on a bare Fastify app', { timeout: 10_000 }, () => {
  let app: FastifyInstance
  let origin: string
  const warnings: string[] = []
  before(async () => {
    app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { warnings.push(JSON.parse(line).msg as string) } } } })
    // The only onSend hook, as on the API's routes: a throw in the write reaches the batch.
    registerResponseBatching(app)
    // Node refuses a line break in a header value when the response is written.
    app.get('/refused', async (_request, reply) => { reply.header('x-note', 'a\nb'); return { ok: true } })
    app.get('/fine', async () => ({ ok: true }))
    // Sends without returning the reply: Fastify sends the handler's undefined result too.
    app.get('/unreturned', async (_request, reply) => { reply.send({ ok: true }) })
    await app.listen({ port: 0, host: '127.0.0.1' })
    origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  })
  after(async () => { await app?.close() })

  it('turns a write that throws into its own request\'s error; the rest of the batch is written', async () => {
    const { events, statuses } = await inOneTurn(app.server, origin, [
      // Fastify's last-resort 500 is chunked: the closed connection ends it.
      request('refused', '/refused', TEST_KEY, 'Connection: close\r\n'), request('fine', '/fine')
    ])
    assert.deepEqual(statuses, [500, 200])
    assert.ok(events.includes('written fine'))
  })

  it('writes a reply sent twice while held once, without errors', async () => {
    warnings.length = 0
    const response = await fetch(`${origin}/unreturned`)
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { ok: true })
    // Without the guard, Fastify warns "Reply was already sent" and logs the second write's error.
    assert.deepEqual(warnings, [])
  })
})
