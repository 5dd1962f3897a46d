import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { describe, it } from 'node:test'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openStore } from '../../src/store/open-store.js'
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js'
import { MIGRATION_LOCK } from '../../src/store/postgres/store.js'
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js'
import { backends, createTestDatabase } from '../support/helper.js'
import { startCli } from '../support/process.js'

describe('migrations at the same moment', () => {
  for (const postgres of backends('postgres', 'pgbouncer')) {
    it(`${postgres.name}: two stores migrating one fresh database concurrently both succeed, and it is migrated once`, async () => {
      const database = await createTestDatabase(postgres.name)
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
  }

  for (const postgres of backends('postgres', 'pgbouncer')) {
    it(`${postgres.name}: a store waits for another instance's long migration, past its query timeout, instead of failing to start`, async () => {
      const database = await createTestDatabase(postgres.name)
      const other = new pg.Client({ connectionString: database.url })
      await other.connect()
      const store = await openStore(database.url, { timeoutMs: 300 })
      try {
      // The other instance holds the migration lock for a while (a slow migration).
        await other.query('BEGIN')
        await other.query('SELECT pg_advisory_xact_lock(hashtextextended(current_schema(), $1))', [MIGRATION_LOCK])
        const migrating = store.migrate()
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        await other.query('COMMIT')
        assert.deepEqual(await migrating, POSTGRES_MIGRATIONS.map((m) => m.version))
      } finally {
        await other.end()
        await store.close()
        await database.drop()
      }
    })
  }

  it('sqlite: a store migrating while another process is in the middle of migrating the same file waits for it, then has nothing to apply', async () => {
    const database = await createTestDatabase('sqlite')
    const path = database.url.slice('sqlite:'.length)
    try {
      const peer = spawn(process.execPath, ['test/support/sqlite-migrating-peer.js', path, '500'], { stdio: ['ignore', 'pipe', 'inherit'] })
      const peerDone = new Promise((resolve) => peer.once('exit', resolve))
      await new Promise<void>((resolve) => peer.stdout.once('data', () => resolve())) // it holds the write lock now
      const store = await openStore(database.url)
      try {
        assert.deepEqual(await store.migrate(), [])
      } finally {
        await store.close()
      }
      assert.equal(await peerDone, 0)

      const db = new Database(path, { readonly: true })
      const rows = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>
      db.close()
      assert.deepEqual(rows.map((row) => row.version), SQLITE_MIGRATIONS.map((m) => m.version))
    } finally {
      await database.drop()
    }
  })
})

for (const backend of backends()) {
  describe(`${backend.name}: petstore migrate`, { skip: backend.skip }, () => {
    it('succeeds when run twice at once on a fresh database, and the service then starts on it', async () => {
      const database = await createTestDatabase(backend.name)
      try {
        const runs = [startCli(['migrate'], { DATABASE_URL: database.url }), startCli(['migrate'], { DATABASE_URL: database.url })]
        for (const run of runs) {
          assert.equal(await run.exited, 0, run.stderr())
          assert.equal(run.stdout(), 'migrations applied\n')
        }
        const store = await openStore(database.url)
        try {
          assert.deepEqual(await store.migrate(), [], 'nothing left to apply')
          assert.deepEqual(await store.listPets({ limit: 1 }), [])
        } finally {
          await store.close()
        }
      } finally {
        await database.drop()
      }
    })
  })
}
