/**
 * The admission stage (src/http/stages/admission.ts): what the service cannot serve in time is refused at
 * once, with 503, Retry-After and the Error body, before any lookup; what it admitted is served.
 * Timing bounds here are generous: the speed figures come from the bench.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import pg from 'pg'
import { TEST_KEY } from '../support/constants.js'
import { loopThreadTimes } from '../../src/process/loop-thread.js'
import { exportPages } from '../../src/store/export-pages.js'
import { POOL_SIZE_DEFAULT } from '../../src/store/postgres/store.js'
import { CREATE_BATCHES as SQLITE_CREATE_BATCHES } from '../../src/store/sqlite/store.js'
import { backends, errorBody, get, post, startTestServer, until, type TestServer } from '../support/helper.js'

const REFUSAL = { code: 'unavailable', message: 'the service is at capacity; retry in 1 s', status: 503 }

/** The refusal, its header and its time: answered within `withinMs`. */
async function assertRefused (response: Promise<Response>, withinMs: number): Promise<void> {
  const started = performance.now()
  const answer = await response
  const tookMs = performance.now() - started
  assert.equal(answer.status, 503)
  assert.equal(answer.headers.get('retry-after'), '1')
  assert.deepEqual(await errorBody(answer), REFUSAL)
  assert.ok(tookMs < withinMs, `refused after ${Math.round(tookMs)} ms`)
}

async function refusalsByReason (server: TestServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  const counts: Record<string, number> = {}
  for (const [, reason, value] of text.matchAll(/^petstore_http_refusals_total\{reason="(\w+)"\} (\d+)$/gm)) counts[reason!] = Number(value)
  return counts
}

async function storedNames (server: TestServer): Promise<string[]> {
  const names: string[] = []
  for await (const page of exportPages(server.store, 1_000)) names.push(...page.map((pet) => pet.name))
  return names
}

async function storeErrors (server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  return Number(/^petstore_store_errors_total (\d+)$/m.exec(text)?.[1])
}

describe('admission: the order of the stages', () => {
  let server: TestServer
  before(async () => { server = await startTestServer({ env: { MAX_QUEUE_DELAY: '0' } }) })
  after(async () => { await server.close() })

  it('refuses every request behind a key when MAX_QUEUE_DELAY is 0, getPet\'s with its deprecation headers', async () => {
    await assertRefused(get(server, '/pets'), 5_000)
    await assertRefused(post(server, '/pets', { name: 'Rex', categoryId: 1 }, { 'idempotency-key': 'refused' }), 5_000)
    const getPet = await get(server, '/pets/1')
    assert.equal(getPet.status, 503)
    assert.ok(getPet.headers.get('deprecation') !== null && getPet.headers.get('sunset') !== null)
    assert.equal(getPet.headers.get('x-request-id')?.length, 36)
  })

  it('answers a missing or malformed key 401 first, and never refuses health, readiness or the documents', async () => {
    assert.equal((await fetch(`${server.api}/pets`)).status, 401)
    assert.equal((await fetch(`${server.api}/pets`, { headers: { authorization: 'Basic abc' } })).status, 401)
    for (const path of ['/healthz', '/readyz', '/readyz/process', '/v1/openapi.json', '/docs/']) assert.equal((await fetch(`${server.origin}${path}`)).status, 200, path)
  })

  it('counts refusals by reason, every reason from the start, and not as store errors', async () => {
    const counts = await refusalsByReason(server)
    assert.deepEqual(Object.keys(counts).sort(), ['connection_queue', 'event_loop', 'forced', 'pool_wait'])
    assert.equal(counts.forced, 3)
    assert.equal(counts.event_loop, 0)
    assert.equal(await storeErrors(server), 0)
  })

  it('stores nothing it refused: the Idempotency-Key of a refused create was never taken', async () => {
    assert.equal((await server.store.listPets({ limit: 10 })).length, 0)
  })

  it('logs no line for a refusal at the info level, not even a warning; other requests keep theirs', async () => {
    const lines = server.logs()
    assert.deepEqual(lines.filter((line) => line.status === 503 || (line.level as number) >= 40), [])
    assert.ok(lines.some((line) => line.msg === 'request' && line.status === 401))
  })
})

/** A keep-alive connection served once already, as a client holds it: each get() sends a list and resolves with the status. */
async function keptAlive (origin: string): Promise<{ get: () => Promise<number> }> {
  const { hostname, port } = new URL(origin)
  const socket = connect(Number(port), hostname)
  await once(socket, 'connect')
  let received = ''
  const waiting: Array<(status: number) => void> = []
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk
    for (;;) {
      const head = received.indexOf('\r\n\r\n')
      const length = /content-length: (\d+)/i.exec(received.slice(0, head))?.[1]
      if (head === -1 || length === undefined || received.length < head + 4 + Number(length)) return
      waiting.shift()?.(Number(received.split(' ', 2)[1]))
      received = received.slice(head + 4 + Number(length))
    }
  })
  after(() => { socket.destroy() })
  return {
    get: async () => await new Promise<number>((resolve) => {
      waiting.push(resolve)
      socket.write(`GET /v1/pets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`)
    })
  }
}

describe('admission: an event loop running behind', () => {
  let server: TestServer
  // Far above a busy test machine's own pauses, and far below the stall; the stage looks four times within it.
  const MAX_QUEUE_DELAY_MS = 150
  const TICK_MS = MAX_QUEUE_DELAY_MS / 4
  before(async () => { server = await startTestServer({ env: { MAX_QUEUE_DELAY: String(MAX_QUEUE_DELAY_MS) } }) })
  after(async () => { await server.close() })

  it('refuses what waited behind a stall, then serves again', async () => {
    const connections = await Promise.all(Array.from({ length: 10 }, async () => await keptAlive(server.origin)))
    for (const connection of connections) assert.equal(await connection.get(), 200)
    const answers = connections.map((connection) => connection.get())
    // The requests wait while this process computes for 400 ms of CPU, as in a burst: work of its own,
    // however long a busy machine makes it last.
    const end = loopThreadTimes()!.ranMs + 400
    while (loopThreadTimes()!.ranMs < end) { // the stall itself
    }
    for (const answer of answers) assert.equal(await answer, 503)
    assert.equal((await refusalsByReason(server)).event_loop, 10)
    await sleep(50)
    assert.equal((await get(server, '/pets')).status, 200)
  })

  it('refuses what waited behind a stall that began a tick after the last request', async () => {
    const connections = await Promise.all(Array.from({ length: 10 }, async () => await keptAlive(server.origin)))
    // The stage's timer rests (two ticks without a request), one request arms it, and one tick
    // later it goes on with no request since: the stall begins there, its late tick runs first.
    await sleep(4 * TICK_MS)
    assert.equal(await connections[0]!.get(), 200)
    await sleep(TICK_MS + 5)
    await new Promise(setImmediate)
    const answers = connections.map((connection) => connection.get())
    const end = loopThreadTimes()!.ranMs + 400
    while (loopThreadTimes()!.ranMs < end) { // the stall itself
    }
    for (const answer of answers) assert.equal(await answer, 503)
  })
})

/**
 * Holds what blocks creates: SQLite's write lock, or PostgreSQL's lock on pets, which blocks lists
 * too when `exclusive` (an outage), and creates alone otherwise (a slow database or disk).
 */
async function holdLock (backend: string, server: TestServer, exclusive: boolean): Promise<() => Promise<void>> {
  if (backend === 'sqlite') {
    const db = new Database(server.database.url.slice('sqlite:'.length))
    db.exec('BEGIN IMMEDIATE')
    return async () => { db.exec('ROLLBACK'); db.close() }
  }
  const client = new pg.Client({ connectionString: server.database.directUrl })
  await client.connect()
  await client.query('BEGIN')
  await client.query(`LOCK TABLE pets IN ${exclusive ? 'ACCESS EXCLUSIVE' : 'SHARE'} MODE`)
  return async () => { await client.query('ROLLBACK'); await client.end() }
}

/** The calls that hold a connection while the database does not answer: PostgreSQL's pool; SQLite's writer, with the first create. */
const HOLDERS = { sqlite: 1, postgres: POOL_SIZE_DEFAULT, pgbouncer: POOL_SIZE_DEFAULT }
/** The keyed creates one turn serves: a batch of SQLite's writer; on PostgreSQL, each is a statement of its own. */
const TURN = { sqlite: SQLITE_CREATE_BATCHES.maxBatch, postgres: POOL_SIZE_DEFAULT, pgbouncer: POOL_SIZE_DEFAULT }

for (const backend of backends()) {
  describe(`${backend.name}: admission with a database that does not answer`, { skip: backend.skip }, () => {
    let server: TestServer
    // A delay far above a busy machine's stalls, so that the reason is the database's queue alone.
    before(async () => { server = await startTestServer({ backend: backend.name, env: { MAX_QUEUE_DELAY: '500', POOL_WAIT: '1500' } }) })
    after(async () => { await server.close() })

    it('answers a burst with fast 503s while more calls wait than a turn serves; serves again once it answers', async () => {
      const create = (key: string): Promise<Response> => post(server, '/pets', { name: key, categoryId: 1 }, { 'idempotency-key': key })
      assert.equal((await create('before')).status, 201)
      const release = await holdLock(backend.name, server, true)
      // The holders of every connection, then a turn's worth of calls, then 5 beyond it.
      const { waits } = server.store
      const waiting = [create('waiting-0')]
      await sleep(50)
      const turn = TURN[backend.name]
      waiting.push(...Array.from({ length: HOLDERS[backend.name] - 1 + turn + 5 }, async (_, i) => await create(`waiting-${i + 1}`)))
      let refused = 0
      for (const response of waiting) void response.then((answer) => { if (answer.status === 503) refused++ })
      // Every call in the queue or refused, and the oldest waiting past MAX_QUEUE_DELAY, however long a busy machine takes.
      await until(() => waits.count() + refused === turn + 5 && waits.oldestMs() > 500, 10_000)
      const burst = Array.from({ length: 40 }, async (_, i) => i % 2 === 0 ? await create(`burst-${i}`) : await get(server, '/pets'))
      for (const response of burst) await assertRefused(response, 1_000)
      for (const path of ['/healthz', '/readyz', '/readyz/process']) assert.equal((await fetch(`${server.origin}${path}`)).status, 200, path)

      await until(() => refused === 5, 10_000) // past POOL_WAIT: the calls beyond the next turn are refused too
      await release()
      const statuses = await Promise.all(waiting.map(async (response) => (await response).status))
      assert.deepEqual(statuses.filter((status) => status !== 201 && status !== 503), [])
      assert.equal(statuses.filter((status) => status === 503).length, 5, 'those beyond the next turn are refused')

      // Those 5 at once if they came once the queue was old (a slow test machine), else past POOL_WAIT.
      const { connection_queue: atOnce = 0, pool_wait: pastPoolWait = 0 } = await refusalsByReason(server)
      assert.equal(atOnce + pastPoolWait, 45)
      assert.ok(atOnce >= 40, `${atOnce} refused at once`)
      assert.equal(await storeErrors(server), 0)

      // Every later request is served; no refused create was stored, nor its key taken.
      for (let i = 0; i < 40; i += 2) {
        const again = await create(`burst-${i}`)
        assert.equal(again.status, 201)
        assert.equal(again.headers.get('idempotent-replayed'), null)
      }
      assert.equal((await get(server, '/pets')).status, 200)
      const stored = await storedNames(server)
      const served = ['before', ...statuses.flatMap((status, i) => status === 201 ? [`waiting-${i}`] : []), ...Array.from({ length: 20 }, (_, i) => `burst-${2 * i}`)]
      assert.deepEqual(stored.sort(), served.sort())
    })

    it('serves a handful of creates that wait past POOL_WAIT for a slow turn (a slow disk, a slow database), and lists meanwhile', async () => {
      const before = (await refusalsByReason(server))
      const release = await holdLock(backend.name, server, false)
      const creates = Array.from({ length: 8 }, async (_, i) => await post(server, '/pets', { name: `slow-${i}`, categoryId: 1 }))
      await sleep(2_000)
      for (let i = 0; i < 4; i++) assert.equal((await get(server, '/pets?limit=1')).status, 200)
      await release()
      assert.deepEqual(await Promise.all(creates.map(async (response) => (await response).status)), Array(8).fill(201))
      assert.deepEqual(await refusalsByReason(server), before)
    })
  })
}
