/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a
 * committed transaction is on disk before the call returns. Several processes
 * may open the same file: writers take the lock in turn (busy timeout).
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { randomBytes } from 'node:crypto'
import Database from 'better-sqlite3'
import { toInt64, type Int64 } from '../../schemas/kinds.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import type { ApiKeyRecord, CreateOutcome, CreateRequest, ListPetsOptions, NewPetRecord, Store } from '../store.js'
import { translateSqliteError } from './errors.js'
import { MIGRATIONS } from './migrations.js'
import { exportPages } from '../export-pages.js'

/** A row of `pets` as better-sqlite3 returns it with safe integers on. */
interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus }
interface ApiKeyRow { id: bigint, name: string, key_hash: string, created_at: string, revoked_at: string | null }
interface IdempotencyRow { fingerprint: string, pet_id: bigint, created_at: bigint }

function rowToPet (row: PetRow): Pet {
  return { id: toInt64(row.id), name: row.name, categoryId: toInt64(row.category_id), status: row.status }
}

function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return { id: Number(row.id), name: row.name, keyHash: row.key_hash, createdAt: row.created_at, revokedAt: row.revoked_at }
}

const PET_COLUMNS = 'id, name, category_id, status'
const NEW_PET_COLUMNS = 'name, category_id, status'

// Writers of other processes (WORKERS, the CLI) hold the lock for one transaction at most.
const BUSY_TIMEOUT_MS = 5000

/**
 * WAL lets readers run beside the one writer; synchronous=FULL fsyncs the WAL at
 * every commit, so a 201 survives a power cut. Integers come back as bigint (exact int64).
 */
export function configureConnection (db: Database.Database): void {
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.defaultSafeIntegers(true)
}

const IMPORT_ROWS = 100

function insertPetsSql (rows: number, columns = PET_COLUMNS): string {
  const row = `(${columns.split(', ').map(() => '?').join(', ')})`
  return `INSERT INTO pets (${columns}) VALUES ${Array(rows).fill(row).join(', ')}`
}

/**
 * Opens (creating when missing) the SQLite database at `path`.
 * @example const store = openSqliteStore('./data/petstore.db'); await store.migrate()
 */
export function openSqliteStore (path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS })
  configureConnection(db)

  // Statements are prepared on first use: the tables exist only after migrate().
  const cache = new Map<string, Database.Statement>()
  const sql = (text: string): Database.Statement => {
    let statement = cache.get(text)
    if (statement === undefined) {
      statement = db.prepare(text)
      cache.set(text, statement)
    }
    return statement
  }

  const findPetRow = (id: Int64): PetRow | undefined =>
    sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`).get(id) as PetRow | undefined

  const createPets = db.transaction((requests: CreateRequest[], now: number, notBefore: number): CreateOutcome[] =>
    requests.map((request): CreateOutcome => {
      const { pet, idempotency } = request
      if (idempotency !== undefined) {
        const seen = sql('SELECT fingerprint, pet_id, created_at FROM idempotency_keys WHERE scope = ? AND key = ?')
          .get(idempotency.scope, idempotency.key) as IdempotencyRow | undefined
        if (seen !== undefined && Number(seen.created_at) >= notBefore) {
          if (seen.fingerprint !== idempotency.fingerprint) return { kind: 'key_reused' }
          const row = findPetRow(seen.pet_id)
          if (row !== undefined) return { kind: 'replayed', pet: rowToPet(row) }
        }
      }
      const { id } = sql('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id')
        .get(pet.name, pet.categoryId, pet.status) as { id: bigint }
      if (idempotency !== undefined) {
        sql('INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, pet_id, created_at) VALUES (?, ?, ?, ?, ?)')
          .run(idempotency.scope, idempotency.key, idempotency.fingerprint, id, now)
      }
      return { kind: 'created', pet: { id: toInt64(id), ...pet } }
    }))

  // Rows go in IMPORT_ROWS at a time: one statement per 100 rows costs half of one per row.
  const importPets = db.transaction((pets: Pet[]) => {
    const values: unknown[] = []
    let i = 0
    for (; i + IMPORT_ROWS <= pets.length; i += IMPORT_ROWS) {
      values.length = 0
      for (let j = i; j < i + IMPORT_ROWS; j++) values.push(pets[j]!.id, pets[j]!.name, pets[j]!.categoryId, pets[j]!.status)
      sql(insertPetsSql(IMPORT_ROWS)).run(values)
    }
    for (const pet of pets.slice(i)) sql(insertPetsSql(1)).run(pet.id, pet.name, pet.categoryId, pet.status)
  })

  // The same batching without ids: INTEGER PRIMARY KEY hands out max(id) + 1, as createPets does.
  const insertPets = db.transaction((pets: NewPetRecord[]) => {
    const insertRows = sql(insertPetsSql(IMPORT_ROWS, NEW_PET_COLUMNS))
    const values: unknown[] = []
    let i = 0
    for (; i + IMPORT_ROWS <= pets.length; i += IMPORT_ROWS) {
      values.length = 0
      for (let j = i; j < i + IMPORT_ROWS; j++) values.push(pets[j]!.name, pets[j]!.categoryId, pets[j]!.status)
      insertRows.run(values)
    }
    for (const pet of pets.slice(i)) sql(insertPetsSql(1, NEW_PET_COLUMNS)).run(pet.name, pet.categoryId, pet.status)
  })

  const store: Store = {
    kind: 'sqlite',

    async migrate () {
      db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
      // IMMEDIATE takes the write lock first: two processes migrating at once run one after the other.
      return db.transaction(() => {
        const rows = db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: bigint }>
        const done = new Set(rows.map((row) => Number(row.version)))
        const applied: number[] = []
        for (const migration of MIGRATIONS) {
          if (done.has(migration.version)) continue
          db.exec(migration.sql)
          db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString())
          applied.push(migration.version)
        }
        return applied
      }).immediate()
    },

    async ping () {
      sql('SELECT 1 FROM pets LIMIT 1').get()
    },

    async close () {
      if (db.open) db.close()
    },

    async listPets ({ limit, status, afterId = 0 }: ListPetsOptions) {
      const rows = (status === undefined
        ? sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`).all(afterId, limit)
        : sql(`SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`).all(status, afterId, limit)) as PetRow[]
      return rows.map(rowToPet)
    },

    async findPet (id) {
      const row = findPetRow(id)
      return row === undefined ? undefined : rowToPet(row)
    },

    async createPets (requests, idempotencyTtlMs) {
      const now = Date.now()
      return createPets.immediate(requests, now, now - idempotencyTtlMs)
    },

    async importPets (pets) {
      importPets.immediate(pets)
    },

    async insertPets (pets) {
      insertPets.immediate(pets)
    },

    exportPets (pageSize) {
      return exportPages((options) => store.listPets(options), pageSize)
    },

    async sweepIdempotencyKeys (olderThan) {
      return Number(sql('DELETE FROM idempotency_keys WHERE created_at < ?').run(olderThan.getTime()).changes)
    },

    async insertApiKey (name, keyHash) {
      const row = sql('INSERT INTO api_keys (name, key_hash, created_at) VALUES (?, ?, ?) RETURNING *')
        .get(name, keyHash, new Date().toISOString()) as ApiKeyRow
      return rowToApiKey(row)
    },

    async findApiKeyByHash (keyHash) {
      const row = sql('SELECT * FROM api_keys WHERE key_hash = ?').get(keyHash) as ApiKeyRow | undefined
      return row === undefined ? undefined : rowToApiKey(row)
    },

    async listApiKeys () {
      return (sql('SELECT * FROM api_keys ORDER BY id').all() as ApiKeyRow[]).map(rowToApiKey)
    },

    async revokeApiKey (name) {
      const result = sql('UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL').run(new Date().toISOString(), name)
      return result.changes > 0
    },

    async secret (name) {
      sql('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)').run(name, randomBytes(32))
      return (sql('SELECT value FROM secrets WHERE name = ?').get(name) as { value: Buffer }).value
    }
  }
  return translateSqliteError(store, db)
}
