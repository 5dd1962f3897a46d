import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openStore } from '../../src/store/open-store.js'
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js'
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js'
import { backends, createTestDatabase } from '../helper.js'

const run = promisify(execFile)
const [, postgres] = backends()

describe('migrations at the same moment', () => {
  it('postgres: two stores migrating one fresh schema concurrently both succeed, and the schema is migrated once', { skip: postgres!.skip }, async () => {
    const database = await createTestDatabase('postgres')
    const stores = await Promise.all([openStore(database.url), openStore(database.url)])
    try {
      const applied = await Promise.all(stores.map(async (store) => await store.migrate()))
      const all = POSTGRES_MIGRATIONS.map((m) => m.version)
      assert.deepEqual(applied.flat().sort(), all, 'each version applied by exactly one of them')
      assert.deepEqual(await Promise.all(stores.map(async (store) => await store.migrate())), [[], []])

      const client = new pg.Client({ connectionString: database.url })
      await client.connect()
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
      await client.end()
      assert.deepEqual(rows.map((row) => row.version), all)
    } finally {
      await Promise.all(stores.map(async (store) => await store.close()))
      await database.drop()
    }
  })

  it('sqlite: four processes migrating one fresh file at the same instant all succeed, and the file is migrated once', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const at = String(Date.now() + 2_500) // every process is started and waiting by then
      const outputs = await Promise.all([1, 2, 3, 4].map(async () =>
        (await run(process.execPath, ['--import', 'tsx', 'test/support/migrate-at.ts', database.url, at])).stdout))
      const applied = outputs.flatMap((out) => JSON.parse(out) as number[])
      const all = SQLITE_MIGRATIONS.map((m) => m.version)
      assert.deepEqual(applied.sort(), all, 'each version applied by exactly one process')

      const db = new Database(database.url.slice('sqlite:'.length), { readonly: true })
      const rows = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>
      db.close()
      assert.deepEqual(rows.map((row) => row.version), all)
    } finally {
      await database.drop()
    }
  })
})
