/**
 * `DATABASE_URL=postgres://` alone, the rest from libpq's variables: how a pod reaches a database
 * whose credentials an operator keeps in a Secret of its own (CloudNativePG's `<cluster>-app`:
 * `username`, `password`, `dbname`), none of them percent-encoded into a URL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parseConfig } from '../../../src/config.js'
import { parseAddress } from '../../../src/store/postgres/address.js'
import { backends, createTestDatabase, get, post, startTestServer, type TestDatabase, type TestServer } from '../../support/helper.js'

const LIBPQ_VARIABLES = ['PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE'] as const

describe('DATABASE_URL=postgres:// alone', () => {
  it('is a PostgreSQL address of one host, the driver\'s to find in PGHOST', () => {
    for (const raw of ['postgres://', 'postgresql://']) {
      assert.equal(parseConfig({ DATABASE_URL: raw }).databaseUrl, raw)
      const address = parseAddress(raw)
      assert.deepEqual(address.hosts, [{ label: 'PGHOST', url: raw }])
      assert.equal(address.target, 'any')
    }
    assert.deepEqual(parseAddress('postgres:///petstore').hosts.map((host) => host.label), ['PGHOST'])
  })
})

for (const postgres of backends('postgres', 'pgbouncer')) {
  describe(`${postgres.name}: DATABASE_URL=postgres:// with PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE`, () => {
    let database: TestDatabase
    let fromVariables: TestServer
    let fromUrl: TestServer
    const before_: Record<string, string | undefined> = {}

    before(async () => {
      database = await createTestDatabase(postgres.name)
      const url = new URL(database.url)
      const values: Record<typeof LIBPQ_VARIABLES[number], string> = {
        PGHOST: url.hostname,
        PGPORT: url.port || '5432',
        PGUSER: decodeURIComponent(url.username),
        PGPASSWORD: decodeURIComponent(url.password),
        PGDATABASE: decodeURIComponent(url.pathname.slice(1))
      }
      for (const name of LIBPQ_VARIABLES) {
        before_[name] = process.env[name]
        process.env[name] = values[name]
      }
      fromVariables = await startTestServer({ database: { ...database, url: 'postgres://', drop: async () => {} } })
      fromUrl = await startTestServer({ database })
    })
    after(async () => {
      await fromVariables?.close()
      await fromUrl?.close()
      for (const name of LIBPQ_VARIABLES) {
        if (before_[name] === undefined) delete process.env[name]
        else process.env[name] = before_[name]
      }
      await database?.drop()
    })

    it('migrates and stores in the database the variables name, as the full URL reaches it', async () => {
      const created = await post(fromVariables, '/pets', { name: 'Libpq', categoryId: 5 })
      assert.equal(created.status, 201)
      const { id } = await created.json() as { id: number }
      const read = await get(fromUrl, `/pets/${id}`)
      assert.equal(read.status, 200)
      assert.equal((await read.json() as { name: string }).name, 'Libpq')
      assert.equal((await fetch(`${fromVariables.origin}/readyz`)).status, 200)
    })
  })
}
