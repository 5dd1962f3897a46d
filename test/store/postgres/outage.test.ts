import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backends, createTestDatabase, errorBody, get, post, startTestServer, throughAddress, type TestDatabase, type TestServer } from '../../support/helper.js'
import { listAll } from '../../support/list-pages.js'
import { TcpProxy, type CutMode } from '../../support/tcp-proxy.js'

// Every wait on the database gives up after this; an answer must come within a few of them.
const TIMEOUT_MS = 800
const BOUND_MS = 3 * TIMEOUT_MS + 500

async function timed (request: () => Promise<Response>): Promise<{ response: Response, ms: number }> {
  const started = performance.now()
  const response = await request()
  return { response, ms: performance.now() - started }
}

async function createdIds (responses: Response[]): Promise<number[]> {
  return await Promise.all(responses.filter((r) => r.status === 201).map(async (r) => (await r.json() as { id: number }).id))
}

for (const postgres of backends('postgres', 'pgbouncer')) {
  describe(`${postgres.name}: the database behind a cut network`, () => {
    let database: TestDatabase
    let proxy: TcpProxy
    let server: TestServer
    const committed: number[] = []

    before(async () => {
      database = await createTestDatabase(postgres.name)
      const target = new URL(database.url)
      proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) })
      server = await startTestServer({ database: throughAddress(database, '127.0.0.1', proxy.port), postgres: { timeoutMs: TIMEOUT_MS } })
    })
    after(async () => {
      await server?.close()
      await proxy?.close()
      await database?.drop()
    })

    async function createSome (count: number): Promise<Response[]> {
      return await Promise.all(Array.from({ length: count }, async (_, i) => await post(server, '/pets', { name: `pet ${i}`, categoryId: 7 })))
    }

    async function assertRecovers (): Promise<void> {
      const deadline = Date.now() + 10_000
      while ((await fetch(`${server.origin}/readyz`)).status !== 200) {
        assert.ok(Date.now() < deadline, '/readyz is 200 again within 10 s of the restore')
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const responses = await createSome(5)
      assert.deepEqual(responses.map((r) => r.status), [201, 201, 201, 201, 201])
      committed.push(...await createdIds(responses))
    }

    it('creates before the cut', async () => {
      const responses = await createSome(5)
      assert.deepEqual(responses.map((r) => r.status), [201, 201, 201, 201, 201])
      committed.push(...await createdIds(responses))
    })

    for (const mode of ['reset', 'hang', 'stall'] as CutMode[]) {
      it(`answers 503 unavailable with Retry-After, within ${BOUND_MS} ms, while the network is cut (${mode}), then recovers by itself`, async () => {
        proxy.cut(mode)
        try {
          const calls = [
            ...Array.from({ length: 5 }, (_, i) => async () => await post(server, '/pets', { name: `lost ${i}`, categoryId: 7 })),
            async () => await get(server, '/pets'),
            async () => await get(server, `/pets/${committed[0]}`),
            async () => await fetch(`${server.origin}/readyz`)
          ]
          const results = await Promise.all(calls.map(timed))
          for (const { response, ms } of results) {
            assert.equal(response.status, 503, response.url)
            assert.ok(ms < BOUND_MS, `answered in ${Math.round(ms)} ms`)
            assert.equal(response.headers.get('retry-after'), '1')
            assert.equal((await errorBody(response)).code, 'unavailable')
          }
          assert.doesNotMatch(server.logText(), /"level":50/, 'no internal_error logged')
        } finally {
          proxy.restore()
        }
        await assertRecovers()
        // The creates during the cut got 503 and left nothing behind; every 201 is there.
        assert.deepEqual(await listedIds(), [...committed].sort((a, b) => a - b))
      })
    }

    it('never answers 201 for an animal that was not committed, when the cut lands among creates in flight', async () => {
      const inFlight = createSome(60)
      setTimeout(() => proxy.cut('reset'), 5)
      const responses = await inFlight
      proxy.restore()
      for (const response of responses) assert.ok([201, 503].includes(response.status), `status ${response.status}`)
      const answered201 = await createdIds(responses)
      committed.push(...answered201)
      await assertRecovers()
      const listed = await listedIds()
      for (const id of answered201) assert.ok(listed.includes(id), `animal ${id} answered 201 and is listed`)
    })

    it('lists every animal once after all that', async () => {
    // A cut landing between COMMIT and its answer leaves an animal whose create got 503
    // (the client retries with Idempotency-Key); it is listed once, like every other.
      const listed = await listedIds()
      assert.ok(committed.every((id) => listed.includes(id)))
      assert.equal(new Set(listed).size, listed.length)
    })

    async function listedIds (): Promise<number[]> {
      return (await listAll(`${server.api}/pets?limit=100`)).map((pet) => pet.id)
    }
  })
}
