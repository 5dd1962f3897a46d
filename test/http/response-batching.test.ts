import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { after, before, describe, it } from 'node:test'
import Fastify from 'fastify'
import { registerResponseBatching } from '../../src/http/plugins/response-batching.js'
import { TEST_KEY, startTestServer, type TestServer } from '../helper.js'
import { openRaw } from '../hardening/raw-http.js'

/** Blocks this thread, server included, so what the clients send meanwhile is read in one turn. */
function blockFor (ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

describe('responses of one turn of the event loop', () => {
  let server: TestServer
  before(async () => { server = await startTestServer() })
  after(async () => { await server?.close() })

  /** Sends each request on its own connection, all read in one turn; returns what the server did, in order. */
  async function inOneTurn (requests: string[]): Promise<{ events: string[], statuses: number[] }> {
    const events: string[] = []
    // Before Fastify's listener, so a response written at once is seen too.
    const watch = (request: IncomingMessage, response: ServerResponse): void => {
      const name = request.headers['x-request-id']!
      events.push(`read ${name}`)
      const writeHead = response.writeHead
      response.writeHead = function (this: ServerResponse, ...args: Parameters<typeof writeHead>) {
        events.push(`written ${name}`)
        return writeHead.apply(this, args)
      } as typeof writeHead
    }
    server.app.server.prependListener('request', watch)
    try {
      // The server must have taken every connection first: one it accepts in the same turn is read in the next.
      let accepted = 0
      const allAccepted = new Promise<void>((resolve) => {
        server.app.server.on('connection', function count () {
          if (++accepted < requests.length) return
          server.app.server.removeListener('connection', count)
          resolve()
        })
      })
      const connections = await Promise.all(requests.map(async () => await openRaw(server.origin)))
      await allAccepted
      connections.forEach((connection, index) => connection.write(requests[index]!))
      blockFor(100)
      const responses = await Promise.all(connections.map(async (connection) => await connection.response))
      return { events, statuses: responses.map((response) => response.status) }
    } finally {
      server.app.server.removeListener('request', watch)
    }
  }

  const request = (name: string, key = TEST_KEY): string =>
    `GET /v1/pets?limit=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${name}\r\nAuthorization: Bearer ${key}\r\n\r\n`

  it('are written together after the last request of the turn is handled', async () => {
    const { events, statuses } = await inOneTurn([request('a'), request('b'), request('c')])
    assert.deepEqual(statuses, [200, 200, 200])
    assert.deepEqual(events, ['read a', 'read b', 'read c', 'written a', 'written b', 'written c'])
  })

  it('holds errors answered at once (a 401 in an onRequest hook) the same way', async () => {
    const { events, statuses } = await inOneTurn([request('a', 'wrong-key-0123456789'), request('b')])
    assert.deepEqual(statuses, [401, 200])
    assert.deepEqual(events, ['read a', 'read b', 'written a', 'written b'])
  })

  it('answers a lone request in its own turn', async () => {
    const { events, statuses } = await inOneTurn([request('a')])
    assert.deepEqual(statuses, [200])
    assert.deepEqual(events, ['read a', 'written a'])
  })
})

describe('a response whose write throws, held for the end of the turn', () => {
  it('becomes its own request\'s error; the rest of the batch is written', async () => {
    const app = Fastify()
    registerResponseBatching(app)
    // Node refuses a line break in a header value when the response is written.
    app.get('/refused', async (_request, reply) => { reply.header('x-note', 'a\nb'); return { ok: true } })
    app.get('/fine', async () => ({ ok: true }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    try {
      const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
      const [refused, fine] = await Promise.all([fetch(`${origin}/refused`), fetch(`${origin}/fine`)])
      assert.equal(refused.status, 500)
      assert.equal(((await refused.json()) as { code: string }).code, 'ERR_INVALID_CHAR')
      assert.equal(fine.status, 200)
    } finally {
      await app.close()
    }
  })
})
