/**
 * The PostgreSQL store (`pg` with a pool). Any number of instances may share one
 * database: ids come from one identity sequence, an idempotency key's unique row
 * makes a second create with it wait for the first, migrations take an advisory lock.
 * Unnamed statements only, locks held no longer than a transaction, and no startup
 * parameters (the server's timeouts are the role's defaults), so the store works
 * through a transaction-mode pooler.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { INT64_MAX } from '../../schemas/int64.js'
import type { Pet } from '../../schemas/pets.js'
import { MIGRATIONS_TABLE, pendingMigrations } from '../migrations.js'
import { POOL_WAIT_DEFAULT_MS, type ApiKeyRecord, type ListPetsOptions, type NewApiKeyRecord, type Store } from '../store.js'
import { NoIdLeft, withStoreErrors } from '../store-errors.js'
import { openConnections } from './connection.js'
import { CREATE_BATCHES, prepareCreatePets } from './create-pets.js'
import { isPostgresUnavailable, orNoIdLeft } from './errors.js'
import { MIGRATIONS } from './migrations.js'
import { recordRoleDefaults, roleDefaults, setRoleDefaults } from './role-defaults.js'
import { PET_COLUMNS, rowToApiKey, type ApiKeyRow } from './rows.js'

// Any constant unique to this service, hashed with the schema: migrations of several
// instances on one schema run one at a time, while other schemas do not wait.
export const MIGRATION_LOCK = 7_370_736_174
// Hashed with the role: the role's defaults are its database's, shared by every schema in it.
const ROLE_DEFAULTS_LOCK = 7_370_736_175
// Migrations may rebuild tables, and an instance may wait for another's: not bounded by timeoutMs.
const MIGRATION_TIMEOUT_MS = 30 * 60_000

/** Runs one statement: in a turn of the pool, or on a transaction's connection. */
type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>

async function insertApiKey (query: Query, key: NewApiKeyRecord): Promise<ApiKeyRecord | undefined> {
  const { rows } = await query<ApiKeyRow>(`INSERT INTO api_keys (name, key_hash, scopes, created_at, expires_at, lifetime_seconds, rate_limit)
    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) WHERE retires_at IS NULL DO NOTHING RETURNING *`,
  [key.name, key.keyHash, key.scopes.join(','), key.createdAt, key.expiresAt, key.lifetimeSeconds, key.rateLimit])
  return rows[0] === undefined ? undefined : rowToApiKey(rows[0])
}

/** Connections in the pool of a process unless told otherwise. */
export const POOL_SIZE_DEFAULT = 10

export interface PostgresOptions {
  /** Pool size per process (POOL_SIZE_DEFAULT). */
  maxConnections?: number
  /** Bounds every wait on the database, so an outage fails fast (StoreUnavailable) instead of hanging. */
  timeoutMs?: number
  /** How long a call waits for a connection at most (POOL_WAIT_DEFAULT_MS), then ConnectionWaitExceeded. */
  poolWaitMs?: number
  /** A standby's URL (DATABASE_READ_URL): lists and gets are read there (src/store/read-routing.ts), and migrate() records remote_apply. */
  readUrl?: string
  /** This store reads a standby: several hosts without target_session_attrs mean prefer-standby, not read-write. */
  standby?: boolean
}

/**
 * @example const store = await openPostgresStore('postgres://postgres@127.0.0.1/test')
 */
export async function openPostgresStore (url: string, options: PostgresOptions = {}): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? 5_000
  const defaults = roleDefaults(timeoutMs, options.readUrl !== undefined)
  const maxConnections = options.maxConnections ?? POOL_SIZE_DEFAULT
  const poolWaitMs = options.poolWaitMs ?? POOL_WAIT_DEFAULT_MS
  const perTurn = CREATE_BATCHES.maxBatch
  const connections = openConnections(url, { max: maxConnections, timeoutMs, poolWaitMs, standby: options.standby === true, perTurn })
  const { pool, query, transaction, ping } = connections
  const createPet = prepareCreatePets(connections)

  const store: Store = {
    kind: 'postgres',
    waits: connections.slots,

    async migrate () {
      const inTransaction = async <T>(work: (query: Query) => Promise<T>): Promise<T> => await transaction(async (client) =>
        await work(async (text, values = []) => await client.query({ text, values, query_timeout: MIGRATION_TIMEOUT_MS } as pg.QueryConfig)))
      // Committed before the migration, which may be long: instances of other schemas wait only for this.
      await inTransaction(async (query) => {
        await query('SELECT pg_advisory_xact_lock(hashtextextended(current_user, $1))', [ROLE_DEFAULTS_LOCK])
        await recordRoleDefaults(query, defaults)
      })
      return await inTransaction(async (query) => {
        await setRoleDefaults(query, defaults)
        await query(`SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}`)
        await query('SELECT pg_advisory_xact_lock(hashtextextended(current_schema(), $1))', [MIGRATION_LOCK])
        await query(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`)
        const { rows } = await query<{ version: number }>(`SELECT version FROM ${MIGRATIONS_TABLE}`)
        const applied: number[] = []
        for (const { version, sql } of pendingMigrations(rows.map((row) => row.version), MIGRATIONS)) {
          await query(sql)
          await query(`INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES ($1)`, [version])
          applied.push(version)
        }
        return applied
      })
    },

    async ping () {
      await ping()
    },

    async close () {
      await pool.end()
    },

    async lastBackupAt () {
      // pg_dump's runs are the operator's; this database keeps no record of them.
      return undefined
    },

    async listPets ({ limit, status, afterId = 0 }: ListPetsOptions) {
      const { rows } = status === undefined
        ? await query<Pet>(`SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`, [String(afterId), limit])
        : await query<Pet>(`SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`, [status, String(afterId), limit])
      return rows
    },

    async findPet (id) {
      const { rows } = await query<Pet>(`SELECT ${PET_COLUMNS} FROM pets WHERE id = $1`, [String(id)])
      return rows[0]
    },

    async createPet (pet, claim) {
      return await createPet(pet, claim)
    },

    async importPets (pets) {
      await transaction(async (client) => {
        await client.query(
          'INSERT INTO pets (id, name, category_id, status) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[])',
          [pets.map((p) => String(p.id)), pets.map((p) => p.name), pets.map((p) => String(p.categoryId)), pets.map((p) => p.status)])
        // Ids given by the import must not be handed out again by the sequence; it only ever
        // moves up, since a create in flight elsewhere may hold a value above max(id).
        await client.query(`SELECT setval(seq, imported) FROM (
            SELECT pg_get_serial_sequence('pets', 'id') AS seq, max(id) AS imported FROM pets) AS t
          WHERE imported > COALESCE(pg_sequence_last_value(seq::regclass), 0)`)
      })
    },

    async insertPets (pets) {
      // One statement is one transaction; the identity sequence gives the ids, never twice. The
      // room is checked before any value is taken: a value taken is gone even when rolled back.
      const { rowCount } = await query(
        `INSERT INTO pets (name, category_id, status) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])
          WHERE (SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('pets', 'id')::regclass), 0)) <= ${INT64_MAX} - $4::bigint`,
        [pets.map((p) => p.name), pets.map((p) => String(p.categoryId)), pets.map((p) => p.status), pets.length])
        .catch((err: unknown) => { throw orNoIdLeft(err) })
      if ((rowCount ?? 0) < pets.length) throw new NoIdLeft()
    },

    async analyze () {
      // Until autovacuum gets to a freshly loaded table, the planner guesses: a list by status
      // then read and sorted every match (0.86 ms a page of 10,000 animals) instead of 21 rows.
      await query('ANALYZE pets')
    },

    async deleteIdempotencyKeys (olderThan, limit) {
      // A statement of its own, no transaction: each batch's row locks go as soon as it ends.
      const { rowCount } = await query(
        'DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE created_at < $1 LIMIT $2)',
        [olderThan.getTime(), limit])
      return rowCount ?? 0
    },

    async insertApiKey (key) {
      return await insertApiKey(query, key)
    },

    async rotateApiKey ({ replacedId, graceEndsAt, key }) {
      return await transaction(async (client) => {
        // The row stays locked: a rotation or revocation of the name at the same moment waits for this one.
        const { rowCount } = await client.query('UPDATE api_keys SET retires_at = $2 WHERE id = $1 AND retires_at IS NULL AND revoked_at IS NULL', [replacedId, graceEndsAt])
        if (rowCount === 0) return undefined
        await client.query('UPDATE api_keys SET retires_at = $2 WHERE name = $1 AND retires_at > $2 AND id <> $3', [key.name, key.createdAt, replacedId])
        return await insertApiKey(async (text, values) => await client.query(text, values), key)
      })
    },

    async findApiKeyByHash (keyHash) {
      const { rows } = await query<ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = $1', [keyHash])
      return rows[0] === undefined ? undefined : rowToApiKey(rows[0])
    },

    async listApiKeys () {
      const { rows } = await query<ApiKeyRow>('SELECT * FROM api_keys ORDER BY id')
      return rows.map(rowToApiKey)
    },

    async revokeApiKey (name) {
      const { rowCount } = await query('UPDATE api_keys SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL', [name])
      return (rowCount ?? 0) > 0
    },

    async recordApiKeyUses (uses) {
      // One statement for the batch: no transaction to hold, whatever the pooler.
      await query(`UPDATE api_keys SET last_used_at = u.at
        FROM unnest($1::text[], $2::timestamptz[]) AS u (key_hash, at)
        WHERE api_keys.key_hash = u.key_hash AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < u.at)`,
      [uses.map((use) => use.keyHash), uses.map((use) => use.at)])
    },

    async deleteApiKey (name) {
      await query('DELETE FROM api_keys WHERE name = $1', [name])
    },

    async secret (name) {
      await query('INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, randomBytes(32)])
      const { rows } = await query<{ value: Buffer }>('SELECT value FROM secrets WHERE name = $1', [name])
      return rows[0]!.value
    }
  }
  return withStoreErrors(store, isPostgresUnavailable)
}
