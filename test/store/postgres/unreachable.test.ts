import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { createTestDatabase, errorBody, post, skippedFile, startTestServer, throughAddress, type TestDatabase, type TestServer } from '../../support/helper.js'
import { listAll } from '../../support/list-pages.js'
import { TcpProxy } from '../../support/tcp-proxy.js'

// Every wait on the database gives up after this, as in test/store/postgres/outage.test.ts.
const TIMEOUT_MS = 800

const skip = process.env.TEST_DATABASE_URL === undefined ? 'TEST_DATABASE_URL is not set' : false
if (skip !== false) skippedFile(`PostgreSQL outage under load skipped: ${skip}`)

// The database goes away for both instances at once: a proxy of the test's own is cut, never the
// shared server stopped (every other file's postgres leg and PgBouncer use it).
describe('postgres: two instances while the database is unreachable under load', { skip }, () => {
  let database: TestDatabase
  let proxy: TcpProxy
  const servers: TestServer[] = []
  const committed: number[] = []

  before(async () => {
    database = await createTestDatabase('postgres')
    const target = new URL(database.url)
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) })
    const viaProxy = throughAddress(database, '127.0.0.1', proxy.port)
    for (let i = 0; i < 2; i++) servers.push(await startTestServer({ database: viaProxy, postgres: { timeoutMs: TIMEOUT_MS } }))
  })
  after(async () => {
    for (const server of servers) await server.close()
    await proxy?.close()
    await database?.drop()
  })

  /** Creates on both instances in turn until `until` resolves; every answer's status and Error code. */
  async function load (until: Promise<unknown>): Promise<Array<{ status: number, code?: string, retryAfter: string | null }>> {
    const seen: Array<{ status: number, code?: string, retryAfter: string | null }> = []
    const state = { running: true }
    void until.finally(() => { state.running = false })
    await Promise.all(servers.flatMap((server) => [0, 1].map(async (lane) => {
      for (let i = 0; state.running; i++) {
        const response = await post(server, '/pets', { name: `load ${lane}.${i}`, categoryId: 9 })
        if (response.status === 201) {
          committed.push((await response.json() as { id: number }).id)
          seen.push({ status: 201, retryAfter: null })
        } else {
          seen.push({ status: response.status, code: (await errorBody(response)).code, retryAfter: response.headers.get('retry-after') })
        }
      }
    })))
    return seen
  }

  it('answers 503 unavailable with Retry-After while it is down, then creates again on both, nothing lost', async () => {
    let down: Array<{ status: number, code?: string, retryAfter: string | null }>
    try {
      // Load for a moment, cut the database away under it, and keep the load on for 2 s of the outage.
      down = await load((async () => {
        await sleep(500)
        proxy.cut('reset')
        await sleep(2_000)
      })())
    } finally {
      proxy.restore()
    }
    const statuses = new Set(down.map((answer) => answer.status))
    assert.deepEqual([...statuses].sort(), [201, 503], 'creates before the stop, 503 during it')
    for (const answer of down.filter((a) => a.status === 503)) {
      assert.equal(answer.code, 'unavailable')
      assert.equal(answer.retryAfter, '1')
    }

    for (const server of servers) {
      const deadline = Date.now() + 15_000
      while ((await fetch(`${server.origin}/readyz`)).status !== 200) {
        assert.ok(Date.now() < deadline, '/readyz is 200 again within 15 s of the database\'s return')
        await sleep(100)
      }
      const response = await post(server, '/pets', { name: 'after', categoryId: 9 })
      assert.equal(response.status, 201)
      committed.push((await response.json() as { id: number }).id)
    }
    const listed = (await listAll(`${servers[0]!.api}/pets?limit=100`)).map((pet) => pet.id)
    for (const id of committed) assert.ok(listed.includes(id), `animal ${id} answered 201 and is listed`)
    assert.equal(new Set(listed).size, listed.length, 'each animal listed once')
    console.log(`${down.filter((a) => a.status === 201).length} creates answered 201 and ${down.filter((a) => a.status === 503).length} answered 503 around the outage`)
  })
})
