/**
 * Databases made by the build of commit 88e4a05 (before migration 2) with its own CLI:
 * `migrate`, `keys create --name old-ci`, `keys create --name old-revoked`, `keys revoke
 * old-revoked`, `seed --count 3`; the PostgreSQL one dumped with `pg_dump --no-owner --inserts`.
 * keys.json holds the keys that CLI printed.
 */
import assert from 'node:assert/strict'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import pg from 'pg'
import { ROOT } from '../support/constants.js'
import { backends, createTestDatabase, errorBody, startTestServer, type TestDatabase } from '../support/helper.js'

const FIXTURES = join(ROOT, 'test/fixtures/88e4a05')
const KEYS = JSON.parse(readFileSync(join(FIXTURES, 'keys.json'), 'utf8')) as Record<'sqlite' | 'postgres', { active: string, revoked: string }>

/** A copy of the SQLite file, or a fresh PostgreSQL database loaded with the dump. */
async function oldDatabase (backend: 'sqlite' | 'postgres' | 'pgbouncer'): Promise<TestDatabase> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-88e4a05-'))
    copyFileSync(join(FIXTURES, 'petstore.db'), join(dir, 'petstore.db'))
    const url = `sqlite:${join(dir, 'petstore.db')}`
    return { url, directUrl: url, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const database = await createTestDatabase(backend)
  // psql's meta-commands (\restrict) are no SQL; the rest runs as one simple query.
  const dump = readFileSync(join(FIXTURES, 'postgres.sql'), 'utf8').split('\n').filter((line) => !line.startsWith('\\')).join('\n')
  const client = new pg.Client({ connectionString: database.directUrl })
  await client.connect()
  try {
    await client.query(dump)
  } finally {
    await client.end()
  }
  return database
}

for (const backend of backends()) {
  describe(`${backend.name}: a database made by the build of 88e4a05`, { skip: backend.skip }, () => {
    it('migrates in place: its keys keep working with both scopes, no expiry, no own limit; the revoked one stays revoked', async () => {
      const keys = KEYS[backend.name === 'sqlite' ? 'sqlite' : 'postgres']
      const database = await oldDatabase(backend.name)
      const server = await startTestServer({ backend: backend.name, database })
      try {
        const auth = { authorization: `Bearer ${keys.active}` }
        const listed = await fetch(`${server.api}/pets`, { headers: auth })
        assert.equal(listed.status, 200)
        assert.equal((await listed.json() as unknown[]).length, 3, 'the animals seeded then')
        const created = await fetch(`${server.api}/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' })
        assert.equal(created.status, 201)
        const revoked = await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${keys.revoked}` } })
        assert.equal((await errorBody(revoked)).message, 'Authorization: the API key is unknown or revoked')
        const records = await server.store.listApiKeys()
        assert.deepEqual(records.map((r) => [r.name, r.scopes, r.expiresAt, r.rateLimit, r.retiresAt, r.revokedAt !== null]), [
          ['old-ci', ['pets:read', 'pets:write'], null, null, null, false],
          ['old-revoked', ['pets:read', 'pets:write'], null, null, null, true]
        ])
        assert.deepEqual(await server.store.migrate(), [], 'migrated once')
      } finally {
        await server.close()
        await database.drop()
      }
    })
  })
}
