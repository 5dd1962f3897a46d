import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestDatabase, get, openTestStore, post, skippedFile, startTestServer, throughAddress, type TestDatabase, type TestServer } from '../../support/helper.js'
import { query } from '../../support/database.js'
import { TcpProxy } from '../../support/tcp-proxy.js'

// The real standby's behaviours are proved on the HA cluster (test/ha/cluster.test.ts); here
// the "standby" is the primary's own database through a proxy a test cuts, or another database
// that lags behind (has nothing).
const skip = process.env.TEST_DATABASE_URL === undefined ? 'TEST_DATABASE_URL is not set' : false
if (skip !== false) skippedFile(`PostgreSQL read URL tests skipped: ${skip}`)

async function roleSettings (url: string): Promise<string[]> {
  const rows = await query(url, `SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
    WHERE d.datname = current_database() AND s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)`)
  return (rows[0]?.setconfig ?? []) as string[]
}

async function readCount (server: TestServer, target: string): Promise<number> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`petstore_store_reads_total{target="${target}"}`))
  return Number(line?.split(' ')[1] ?? Number.NaN)
}

describe('postgres: DATABASE_READ_URL', { skip }, () => {
  let database: TestDatabase
  let lagging: TestDatabase
  let proxy: TcpProxy
  const servers: TestServer[] = []

  before(async () => {
    database = await createTestDatabase('postgres')
    lagging = await createTestDatabase('postgres')
    await (await openTestStore(lagging)).close()
    const target = new URL(database.url)
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) })
  })
  after(async () => {
    for (const server of servers) await server.close()
    await proxy?.close()
    await lagging?.drop()
    await database?.drop()
  })

  it('records synchronous_commit = remote_apply for the role in its database; a start without a read URL leaves it', async () => {
    const withRead = await startTestServer({ database, postgres: { readUrl: throughAddress(database, '127.0.0.1', proxy.port).url } })
    servers.push(withRead)
    assert.ok((await roleSettings(database.directUrl)).includes('synchronous_commit=remote_apply'))
    const without = await openTestStore(database)
    await without.close()
    assert.ok((await roleSettings(database.directUrl)).includes('synchronous_commit=remote_apply'), 'removing it is the operator\'s step')
  })

  it('reads the standby, and when it is cut away serves every read from the primary; /readyz follows the primary alone', async () => {
    const server = servers[0]!
    const created = await (await post(server, '/pets', { name: 'Rex', categoryId: 3 })).json() as { id: number }
    assert.equal((await get(server, '/pets?limit=100')).status, 200)
    assert.equal(await readCount(server, 'standby'), 1)
    for (const mode of ['reset', 'hang'] as const) {
      proxy.cut(mode)
      try {
        const started = Date.now()
        const answers = [await get(server, `/pets/${created.id}`), await get(server, '/pets?limit=100'), await fetch(`${server.origin}/readyz`)]
        assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200], mode)
        assert.ok(Date.now() - started < 2_500, `${mode}: within the standby's own timeout, ${Date.now() - started} ms`)
      } finally {
        proxy.restore()
      }
      await new Promise((resolve) => setTimeout(resolve, 5_100)) // the standby's rest
    }
    assert.equal(await readCount(server, 'fallback'), 2, 'one fallback per cut, then the primary alone while the standby rests')
  })

  it('asks the primary before a 404, while a list is the standby\'s own answer', async () => {
    const server = await startTestServer({ database, postgres: { readUrl: lagging.url } })
    servers.push(server)
    const created = await (await post(server, '/pets', { name: 'just made', categoryId: 3 })).json() as { id: number }
    const found = await get(server, `/pets/${created.id}`)
    assert.equal(found.status, 200)
    assert.equal((await found.json() as { name: string }).name, 'just made')
    assert.equal((await get(server, `/pets/${created.id + 1000}`)).status, 404)
    assert.equal(await readCount(server, 'primary'), 2)
    assert.deepEqual(await (await get(server, '/pets')).json(), [])
    assert.equal(await readCount(server, 'standby'), 1)
  })
})
