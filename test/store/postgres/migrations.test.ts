import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { openStore } from '../../../src/store/open-store.js'
import { MIGRATIONS } from '../../../src/store/postgres/migrations.js'
import { MIGRATION_LOCK } from '../../../src/store/postgres/store.js'
import { backends, createTestDatabase } from '../../support/helper.js'
import { createSchema } from '../../support/postgres-schema.js'

describe('postgres: migrations at the same moment', () => {
  for (const postgres of backends('postgres', 'pgbouncer')) {
    it(`${postgres.name}: two stores migrating one fresh database concurrently both succeed, and it is migrated once`, async () => {
      const database = await createTestDatabase(postgres.name)
      const stores = await Promise.all([openStore(database.url), openStore(database.url)])
      try {
        const applied = await Promise.all(stores.map(async (store) => await store.migrate()))
        const all = MIGRATIONS.map((m) => m.version)
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

  // A schema needs search_path as a startup parameter, which PgBouncer refuses: the server itself only.
  for (const postgres of backends('postgres')) {
    it(`${postgres.name}: stores of several schemas migrating one fresh database concurrently all record the role's defaults`, async () => {
      const database = await createTestDatabase(postgres.name)
      const admin = new pg.Client({ connectionString: database.url })
      await admin.connect()
      try {
        const schemas = await Promise.all([1, 2, 3, 4].map(async () => await createSchema(database.url, 'migrating')))
        // The race is in a window of milliseconds: a few rounds, each on a role with no default yet.
        for (let round = 0; round < 5; round++) {
          await admin.query(`ALTER ROLE CURRENT_USER IN DATABASE ${pg.escapeIdentifier(new URL(database.url).pathname.slice(1))} RESET ALL`)
          const stores = await Promise.all(schemas.map(async (schema) => await openStore(schema.url)))
          try {
            await Promise.all(stores.map(async (store) => await store.migrate()))
          } finally {
            await Promise.all(stores.map(async (store) => await store.close()))
          }
        }
        const { rows } = await admin.query<{ setconfig: string[] }>(`SELECT setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
          WHERE d.datname = current_database() AND s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)`)
        assert.deepEqual(rows.map((row) => row.setconfig.map((setting) => setting.split('=')[0]).sort()), [['idle_in_transaction_session_timeout', 'statement_timeout']])
      } finally {
        await admin.end()
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
        assert.deepEqual(await migrating, MIGRATIONS.map((m) => m.version))
      } finally {
        await other.end()
        await store.close()
        await database.drop()
      }
    })
  }
})
