/**
 * The PostgreSQL store (`pg` with a pool). Any number of instances may share one
 * database: ids come from one identity sequence, idempotency keys are taken
 * under an advisory lock, migrations under another.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { INT64_MAX, toInt64, type Int64 } from '../../schemas/kinds.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import type { ApiKeyRecord, CreateOutcome, CreateRequest, ListPetsOptions, Store } from '../store.js'
import { noIdLeft } from '../store-errors.js'
import { orNoIdLeft, translatePostgresError } from './errors.js'
import { MIGRATIONS } from './migrations.js'
import { exportPages } from '../export-pages.js'
import { PET_COLUMNS, PET_FIELDS } from '../pet-fields.js'

/** A row of `pets` as pg returns it: BIGINT arrives as a decimal string. */
interface PetRow { id: string, name: string, category_id: string, status: PetStatus }
interface ApiKeyRow { id: string, name: string, key_hash: string, created_at: Date, revoked_at: Date | null }
interface IdempotencyRow { scope: string, key: string, fingerprint: string, pet_id: string, created_at: string }

function rowToPet (row: PetRow): Pet {
  return { id: toInt64(BigInt(row.id)), name: row.name, categoryId: toInt64(BigInt(row.category_id)), status: row.status }
}

function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    name: row.name,
    keyHash: row.key_hash,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at === null ? null : row.revoked_at.toISOString()
  }
}

// The columns under the API's names, for row_to_json: id, …, category_id AS "categoryId", …
const PET_FIELD_COLUMNS = Object.entries(PET_FIELDS).map(([field, column]) => field === column ? column : `${column} AS "${field}"`).join(', ')
// Any constant unique to this service, hashed with the schema: migrations of several
// instances on one schema run one at a time, while other schemas do not wait.
export const MIGRATION_LOCK = 7_370_736_174
/**
 * SQL: whether the id sequence still has `count` values. Checked before any is taken, since a
 * value taken is gone even when its transaction rolls back: a refused batch leaves the rest to others.
 */
function roomForIds (count: string): string {
  return `(SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('pets', 'id')::regclass), 0)) <= ${INT64_MAX} - ${count}`
}
// Migrations may rebuild tables, and an instance may wait for another's; the hourly sweep may
// delete many rows: not bounded by timeoutMs.
const MIGRATION_TIMEOUT_MS = 30 * 60_000

export interface PostgresOptions {
  /** Pool size per process. */
  maxConnections?: number
  /** Bounds every wait on the database, so an outage answers 503 instead of hanging. */
  timeoutMs?: number
}

/**
 * @example const store = await openPostgresStore('postgres://postgres@127.0.0.1/test')
 */
export async function openPostgresStore (url: string, options: PostgresOptions = {}): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? 5_000
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    // The server gives up first: a statement the client stopped waiting for must not commit
    // after it (a seed or a key reported failed, then there). Cancelled, it rolls back.
    statement_timeout: Math.ceil(timeoutMs * 0.8),
    // A partition can leave the server holding our transaction (and its advisory locks) open:
    // the server ends it, and keepalive notices the dead socket.
    idle_in_transaction_session_timeout: 4 * timeoutMs,
    keepAlive: true,
    idleTimeoutMillis: 30_000
  })
  // An idle connection that dies (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {})

  async function transaction<T> (work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect()
    // After anything but an SQL error (lost, timed out mid-query) the connection's state is
    // unknown: it is discarded (the server rolls back), never given back to the pool.
    let broken = false
    // The pool listens for errors of idle connections only: without this, a connection lost
    // mid-transaction would emit 'error' with no listener and crash the process.
    const onLost = (): void => { broken = true }
    client.on('error', onLost)
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (err) {
      broken = !(err instanceof pg.DatabaseError)
      if (!broken) await client.query('ROLLBACK').catch(() => { broken = true })
      throw err
    } finally {
      if (!broken) client.removeListener('error', onLost)
      client.release(broken)
    }
  }

  async function findPets (client: pg.ClientBase | pg.Pool, ids: Array<Int64 | string>): Promise<Map<string, Pet>> {
    const { rows } = await client.query<PetRow>(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ANY($1::bigint[])`, [ids.map(String)])
    return new Map(rows.map((row) => [row.id, rowToPet(row)]))
  }

  async function createPets (client: pg.PoolClient, requests: CreateRequest[], now: number, notBefore: number): Promise<CreateOutcome[]> {
    const keyed = requests.flatMap((request) => request.idempotency === undefined ? [] : [request.idempotency])
    const seen = new Map<string, IdempotencyRow>()
    if (keyed.length > 0) {
      // Same key from two instances at once: the second waits here, then replays the first.
      await client.query(`SELECT pg_advisory_xact_lock(h) FROM (
          SELECT DISTINCT hashtextextended(s || E'\\n' || k, 0) AS h FROM unnest($1::text[], $2::text[]) AS t(s, k) ORDER BY h) AS locks`,
      [keyed.map((i) => i.scope), keyed.map((i) => i.key)])
      const { rows } = await client.query<IdempotencyRow>(
        `SELECT scope, key, fingerprint, pet_id, created_at FROM idempotency_keys
          WHERE (scope, key) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND created_at >= $3`,
        [keyed.map((i) => i.scope), keyed.map((i) => i.key), notBefore])
      for (const row of rows) seen.set(`${row.scope}\n${row.key}`, row)
    }
    const replayedPets = await findPets(client, [...seen.values()].map((row) => row.pet_id))

    // A key twice in one batch (a retry whose first attempt's client left): the first creates,
    // the others replay it or are refused, as they would be in later batches.
    const firstWithKey = new Map<string, CreateRequest>()
    const toCreate = requests.filter((request) => {
      const idem = request.idempotency
      if (idem === undefined) return true
      const key = `${idem.scope}\n${idem.key}`
      if (seen.has(key) || firstWithKey.has(key)) return false
      firstWithKey.set(key, request)
      return true
    })
    const { rows: ids } = await client.query<{ id: string }>(
      `SELECT nextval(pg_get_serial_sequence('pets', 'id'))::text AS id FROM generate_series(1, $1) WHERE ${roomForIds('$1')}`, [toCreate.length])
    if (ids.length < toCreate.length) throw noIdLeft()
    const created = new Map<CreateRequest, Pet>()
    toCreate.forEach((request, index) => created.set(request, { id: toInt64(BigInt(ids[index]!.id)), ...request.pet }))
    if (toCreate.length > 0) {
      await client.query(
        'INSERT INTO pets (id, name, category_id, status) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[])',
        [ids.map((row) => row.id), toCreate.map((r) => r.pet.name), toCreate.map((r) => String(r.pet.categoryId)), toCreate.map((r) => r.pet.status)])
      const newKeys = toCreate.filter((request) => request.idempotency !== undefined)
      if (newKeys.length > 0) {
        await client.query(
          `INSERT INTO idempotency_keys (scope, key, fingerprint, pet_id, created_at)
            SELECT s, k, f, p, $5 FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS t(s, k, f, p)
            ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, pet_id = EXCLUDED.pet_id, created_at = EXCLUDED.created_at`,
          [newKeys.map((r) => r.idempotency!.scope), newKeys.map((r) => r.idempotency!.key), newKeys.map((r) => r.idempotency!.fingerprint),
            newKeys.map((r) => String(created.get(r)!.id)), now])
      }
    }

    return requests.map((request): CreateOutcome => {
      const pet = created.get(request)
      if (pet !== undefined) return { kind: 'created', pet }
      const idem = request.idempotency!
      const key = `${idem.scope}\n${idem.key}`
      const row = seen.get(key)
      const first = row === undefined ? firstWithKey.get(key)! : undefined
      if ((row?.fingerprint ?? first!.idempotency!.fingerprint) !== idem.fingerprint) return { kind: 'key_reused' }
      return { kind: 'replayed', pet: row === undefined ? created.get(first!)! : replayedPets.get(row.pet_id)! }
    })
  }

  const store: Store = {
    kind: 'postgres',

    async migrate () {
      return await transaction(async (client) => {
        const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> =>
          await client.query<R>({ text, values, query_timeout: MIGRATION_TIMEOUT_MS } as pg.QueryConfig)
        await query(`SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}`)
        await query('SELECT pg_advisory_xact_lock(hashtextextended(current_schema(), $1))', [MIGRATION_LOCK])
        await query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())')
        const { rows } = await query<{ version: number }>('SELECT version FROM schema_migrations')
        const done = new Set(rows.map((row) => row.version))
        const applied: number[] = []
        for (const migration of MIGRATIONS) {
          if (done.has(migration.version)) continue
          await query(migration.sql)
          await query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version])
          applied.push(migration.version)
        }
        return applied
      })
    },

    async ping () {
      await pool.query('SELECT 1')
    },

    // Other instances' commits cannot be seen without a round trip: no page is cached.
    petsVersion () {
      return undefined
    },

    async close () {
      await pool.end()
    },

    async listPets ({ limit, status, afterId = 0 }: ListPetsOptions) {
      const { rows } = status === undefined
        ? await pool.query<PetRow>({ name: 'list-pets', text: `SELECT ${PET_COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`, values: [String(afterId), limit] })
        : await pool.query<PetRow>({ name: 'list-pets-status', text: `SELECT ${PET_COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`, values: [status, String(afterId), limit] })
      return rows.map(rowToPet)
    },

    // row_to_json writes what the Pet schema's serializer would: no spaces, exact bigints, the same escapes.
    async findPetJson (id) {
      const { rows } = await pool.query<{ json: string }>({
        name: 'find-pet-json',
        text: `SELECT row_to_json(pet)::text AS json FROM (SELECT ${PET_FIELD_COLUMNS} FROM pets WHERE id = $1) pet`,
        values: [String(id)]
      })
      return rows[0]?.json
    },

    async createPets (requests, idempotencyTtlMs) {
      const now = Date.now()
      return await transaction((client) => createPets(client, requests, now, now - idempotencyTtlMs))
        .catch((err: unknown) => { throw orNoIdLeft(err) })
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
      // One statement is one transaction; the identity sequence gives the ids, never twice.
      const { rowCount } = await pool.query(
        `INSERT INTO pets (name, category_id, status) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) WHERE ${roomForIds('$4::bigint')}`,
        [pets.map((p) => p.name), pets.map((p) => String(p.categoryId)), pets.map((p) => p.status), pets.length])
        .catch((err: unknown) => { throw orNoIdLeft(err) })
      if ((rowCount ?? 0) < pets.length) throw noIdLeft()
    },

    exportPets (pageSize) {
      return exportPages((options) => store.listPets(options), pageSize)
    },

    async sweepIdempotencyKeys (olderThan) {
      // No request waits on the hourly sweep, and one cancelled at the statement timeout would
      // leave a larger backlog each hour: bounded as a migration is.
      return await transaction(async (client) => {
        await client.query(`SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}`)
        const { rowCount } = await client.query({
          text: 'DELETE FROM idempotency_keys WHERE created_at < $1', values: [olderThan.getTime()], query_timeout: MIGRATION_TIMEOUT_MS
        } as pg.QueryConfig)
        return rowCount ?? 0
      })
    },

    async insertApiKey (name, keyHash) {
      const { rows } = await pool.query<ApiKeyRow>('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING *', [name, keyHash])
      return rows[0] === undefined ? undefined : rowToApiKey(rows[0])
    },

    async findApiKeyByHash (keyHash) {
      const { rows } = await pool.query<ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = $1', [keyHash])
      return rows[0] === undefined ? undefined : rowToApiKey(rows[0])
    },

    async listApiKeys () {
      const { rows } = await pool.query<ApiKeyRow>('SELECT * FROM api_keys ORDER BY id')
      return rows.map(rowToApiKey)
    },

    async revokeApiKey (name) {
      const { rowCount } = await pool.query('UPDATE api_keys SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL', [name])
      return (rowCount ?? 0) > 0
    },

    async deleteApiKey (name) {
      await pool.query('DELETE FROM api_keys WHERE name = $1', [name])
    },

    async secret (name) {
      await pool.query('INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, randomBytes(32)])
      const { rows } = await pool.query<{ value: Buffer }>('SELECT value FROM secrets WHERE name = $1', [name])
      return rows[0]!.value
    }
  }
  return translatePostgresError(store)
}
