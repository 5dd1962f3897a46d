import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import Fastify, { type FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { accessLog } from '../../src/http/plugins/access-log.js'
import { startRequestState } from '../../src/http/stages/request-state.js'
import { TEST_KEY } from '../support/constants.js'
import { get, post, startTestServer, type TestServer } from '../support/helper.js'
import { openRaw } from '../support/raw-http.js'
import { proxyToRedis, redisSettings, redisSkip } from '../support/redis.js'

describe('the access log', () => {
  let server: TestServer
  before(async () => { server = await startTestServer() })
  after(async () => { await server.close() })

  const lineOf = (response: Response): Record<string, unknown> => {
    const requestId = response.headers.get('x-request-id')
    const lines = server.logs().filter((entry) => entry.msg === 'request' && entry.requestId === requestId)
    assert.equal(lines.length, 1, `request lines for ${requestId}`)
    return lines[0]!
  }

  it('writes one line a request: method, route pattern, status and whole microseconds', async () => {
    const { id } = await (await post(server, '/pets', { name: 'Rex', categoryId: 3 })).json() as { id: number }
    const response = await get(server, `/pets/${id}?note=secret`)
    assert.equal(response.status, 200)
    const { method, route, status, micros, ...rest } = lineOf(response)
    assert.deepEqual({ method, route, status }, { method: 'GET', route: '/v1/pets/:petId', status: 200 })
    assert.ok(Number.isSafeInteger(micros) && (micros as number) >= 0, `micros: ${String(micros)}`)
    assert.deepEqual(Object.keys(rest).sort(), ['hostname', 'level', 'msg', 'pid', 'requestId', 'time'])
  })

  it('names no route for an unknown path, and never the URL as sent', async () => {
    const response = await get(server, '/nothing-here?key=secret')
    assert.equal(response.status, 404)
    const line = lineOf(response)
    assert.equal(line.route, '(no route)')
    assert.ok(!JSON.stringify(line).includes('secret'))
  })

  it('writes the line of a client that left mid-body with status 499, and no error', async () => {
    await leave(server.origin, `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nX-Request-Id: left-mid-body\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na')
    assert.deepEqual((await linesOf(server, 'left-mid-body')).map(({ msg, level, route, status }) => ({ msg, level, route, status })),
      [{ msg: 'request', level: 30, route: '/v1/pets', status: 499 }])
  })

  it('writes 499 for a client that left while its create waited for the write lock; the animal is still made', async () => {
    const lock = new Database(server.database.url.slice('sqlite:'.length))
    const before = (await server.store.listPets({ limit: 1000 })).length
    try {
      lock.exec('BEGIN IMMEDIATE')
      const body = '{"name":"Left","categoryId":3}'
      await leave(server.origin, `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nX-Request-Id: left-during-commit\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`, 500) // time to read the body, on a busy machine too
    } finally {
      lock.exec('ROLLBACK')
      lock.close()
    }
    assert.deepEqual((await linesOf(server, 'left-during-commit')).map(({ route, status }) => ({ route, status })),
      [{ route: '/v1/pets', status: 499 }])
    assert.equal((await server.store.listPets({ limit: 1000 })).length, before + 1)
  })
  it('writes 408 as the status of a request whose body stalled past the time allowed', async () => {
    const slow = await startTestServer({ timeouts: { headersMs: 500, requestMs: 1_000 } })
    try {
      const conn = await openRaw(slow.origin)
      conn.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nX-Request-Id: stalled-body\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na')
      assert.equal((await conn.response).status, 408)
      await sleep(200)
      const lines = slow.logs().filter((entry) => entry.requestId === 'stalled-body')
      assert.deepEqual(lines.map(({ msg, status }) => ({ msg, status })), [{ msg: 'request', status: 408 }])
    } finally {
      await slow.close()
    }
  })
})

describe('the access log with the rate limit counted in Redis', { skip: redisSkip('Redis access-log test') }, () => {
  it('writes 499 for a client that left while its request was being counted', async () => {
    const proxy = await proxyToRedis()
    const server = await startTestServer({ env: { RATE_LIMIT: '100', ...redisSettings(proxy) } })
    try {
      // An animal that exists: a 404 is an error, whose handler already wrote the line of a client gone.
      const { id } = await (await post(server, '/pets', { name: 'Rex', categoryId: 3 })).json() as { id: number }
      proxy.cut('stall')
      await leave(server.origin, `GET /v1/pets/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nX-Request-Id: left-during-count\r\n\r\n`)
      // The count's time-out is logged too, as a warning: the request line is the one that matters here.
      const lines = (await linesOf(server, 'left-during-count')).filter((line) => line.msg === 'request')
      assert.deepEqual(lines.map(({ route, status }) => ({ route, status })),
        [{ route: '/v1/pets/:petId', status: 499 }])
    } finally {
      proxy.restore()
      await server.close()
      await proxy.close()
    }
  })
})

/** Sends a request on a connection of its own, and closes that connection `afterMs` later. */
async function leave (origin: string, request: string, afterMs = 100): Promise<void> {
  const socket = connect(Number(new URL(origin).port), '127.0.0.1')
  await once(socket, 'connect')
  socket.write(request)
  await sleep(afterMs)
  socket.destroy()
}

/** The log lines of a request id, once there is one (within 2 s) and 200 ms more have passed for any second. */
async function linesOf (server: TestServer, requestId: string): Promise<Array<Record<string, unknown>>> {
  const lines = (): Array<Record<string, unknown>> => server.logs().filter((entry) => entry.requestId === requestId)
  for (let waited = 0; lines().length === 0 && waited < 2_000; waited += 20) await sleep(20)
  await sleep(200)
  return lines()
}

describe('the access log of a slow request', () => {
  it('gives its duration in microseconds: at least the handler\'s wait, at most what the client saw', async () => {
    const lines: Array<Record<string, unknown>> = []
    const sink = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done() } })
    const app = Fastify({ loggerInstance: pino(sink) as FastifyBaseLogger, disableRequestLogging: true })
    await app.register(accessLog)
    // The request state the access log reads (whether a request was refused for load), as the pipeline starts it.
    app.decorateRequest('state')
    app.addHook('onRequest', startRequestState)
    app.get('/slow', async () => { await sleep(30); return 'done' })
    const origin = await app.listen({ port: 0, host: '127.0.0.1' })
    try {
      const started = performance.now()
      assert.equal((await fetch(`${origin}/slow`)).status, 200)
      const seenMicros = (performance.now() - started) * 1000
      const { micros } = lines.find((line) => line.msg === 'request')!
      assert.ok(typeof micros === 'number' && micros >= 29_000 && micros <= seenMicros, `micros ${String(micros)}, client saw ${seenMicros}`)
    } finally {
      await app.close()
    }
  })
})
