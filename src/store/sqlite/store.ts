/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a
 * committed transaction is on disk before the call returns. Reads run on this
 * connection; creates are grouped and committed by the writer thread on its own.
 * Several processes may open the same file: writers take the lock in turn (busy timeout).
 */
import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { Pet } from '../../schemas/pets.js'
import { Batcher, type BatchPolicy } from '../batcher.js'
import { Slots } from '../slots.js'
import { MIGRATIONS_TABLE, pendingMigrations } from '../migrations.js'
import { POOL_WAIT_DEFAULT_MS, type ApiKeyRecord, type CreateResult, type ListPetsOptions, type NewApiKeyRecord, type NewPetRecord, type RotationRecord, type Store } from '../store.js'
import { withStoreErrors } from '../store-errors.js'
import { backupDatabase } from './backup.js'
import { openConnection, statementCache } from './connection.js'
import type { CreateRequest } from './create-pets.js'
import { isSqliteUnavailable } from './errors.js'
import { MIGRATIONS } from './migrations.js'
import { PageCache } from './page-cache.js'
import { petIdAllocator } from './pet-ids.js'
import { findPetRow, PET_COLUMNS, rowToApiKey, rowToPet, type ApiKeyRow, type PetRow } from './rows.js'
import { SqliteWriter } from './writer.js'

// One writer, and each commit waits for its fsync: creates of a turn, and those that arrive
// during a commit, go in one transaction.
export const CREATE_BATCHES: BatchPolicy = { maxBatch: 256, gatherTurn: true }
// Rows go in IMPORT_ROWS at a time: one statement per 100 rows costs half of one per row.
const IMPORT_ROWS = 100

function insertPetsSql (rows: number): string {
  return `INSERT INTO pets (${PET_COLUMNS}) VALUES ${Array(rows).fill('(?, ?, ?, ?)').join(', ')}`
}

/**
 * Opens (creating when missing) the SQLite database at `path`; a create with more than a batch ahead of
 * it waits for the writer at most `poolWaitMs`.
 * @example const store = openSqliteStore('./data/petstore.db'); await store.migrate()
 */
export function openSqliteStore (path: string, { poolWaitMs = POOL_WAIT_DEFAULT_MS }: { poolWaitMs?: number } = {}): Store {
  const db: Database.Database = openConnection(path)
  const sql = statementCache(db)
  const writer = new SqliteWriter(path)
  const turns = new Slots(1, poolWaitMs, CREATE_BATCHES.maxBatch)
  const creates = new Batcher<CreateRequest, CreateResult>((requests) => writer.createPets(requests), CREATE_BATCHES, turns)
  const pages = new PageCache(db)

  const importPets = db.transaction((pets: Pet[]) => {
    const manyRows = sql(insertPetsSql(IMPORT_ROWS))
    const values: unknown[] = []
    let i = 0
    for (; i + IMPORT_ROWS <= pets.length; i += IMPORT_ROWS) {
      values.length = 0
      for (const pet of pets.slice(i, i + IMPORT_ROWS)) values.push(pet.id, pet.name, pet.categoryId, pet.status)
      manyRows.run(values)
    }
    for (const pet of pets.slice(i)) sql(insertPetsSql(1)).run(pet.id, pet.name, pet.categoryId, pet.status)
    pages.clear()
  })
  // Ids as createPet gives them, all taken before the first row goes in.
  const insertPets = db.transaction((pets: NewPetRecord[]) => {
    const nextId = petIdAllocator(sql)
    importPets(pets.map((pet) => ({ id: nextId(), ...pet })))
  })

  function insertApiKey (key: NewApiKeyRecord): ApiKeyRecord | undefined {
    const row = sql(`INSERT INTO api_keys (name, key_hash, scopes, created_at, expires_at, lifetime_seconds, rate_limit)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) WHERE retires_at IS NULL DO NOTHING RETURNING *`)
      .get(key.name, key.keyHash, key.scopes.join(','), key.createdAt.toISOString(), key.expiresAt?.toISOString() ?? null, key.lifetimeSeconds, key.rateLimit) as ApiKeyRow | undefined
    return row === undefined ? undefined : rowToApiKey(row)
  }
  const rotateApiKey = db.transaction(({ replacedId, graceEndsAt, key }: RotationRecord) => {
    const retired = sql('UPDATE api_keys SET retires_at = ? WHERE id = ? AND retires_at IS NULL AND revoked_at IS NULL').run(graceEndsAt.toISOString(), replacedId)
    if (retired.changes === 0) return undefined
    const at = key.createdAt.toISOString()
    sql('UPDATE api_keys SET retires_at = ? WHERE name = ? AND retires_at > ? AND id <> ?').run(at, key.name, at, replacedId)
    return insertApiKey(key)
  })
  const recordApiKeyUses = db.transaction((uses: ReadonlyArray<{ keyHash: string, at: Date }>) => {
    const update = sql('UPDATE api_keys SET last_used_at = ? WHERE key_hash = ? AND (last_used_at IS NULL OR last_used_at < ?)')
    for (const { keyHash, at } of uses) update.run(at.toISOString(), keyHash, at.toISOString())
  })

  const store: Store = {
    kind: 'sqlite',
    waits: turns,

    async migrate () {
      db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`)
      // IMMEDIATE takes the write lock first: two processes migrating at once run one after the other.
      return db.transaction(() => {
        const applied = db.prepare(`SELECT version FROM ${MIGRATIONS_TABLE}`).pluck().all() as bigint[]
        return pendingMigrations(applied.map(Number), MIGRATIONS).map(({ version, sql: text }) => {
          db.exec(text)
          db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, applied_at) VALUES (?, ?)`).run(version, new Date().toISOString())
          return version
        })
      }).immediate()
    },

    async ping () {
      sql('SELECT 1 FROM pets LIMIT 1').get()
    },

    async close () {
      await writer.close()
      if (db.open) db.close()
    },

    async listPets ({ limit, status, afterId = 0 }: ListPetsOptions) {
      return pages.read(`${status ?? ''}:${afterId}:${limit}`, () => (status === undefined
        ? sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`).all(afterId, limit) as PetRow[]
        : sql(`SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`).all(status, afterId, limit) as PetRow[]
      ).map(rowToPet))
    },

    async findPet (id) {
      const row = findPetRow(sql, id)
      return row === undefined ? undefined : rowToPet(row)
    },

    async createPet (pet, claim) {
      return await creates.submit({ pet, claim })
    },

    async importPets (pets) {
      importPets.immediate(pets)
    },

    async insertPets (pets) {
      insertPets.immediate(pets)
    },

    async analyze () {
      // What SQLite advises after large changes: it analyzes the tables whose statistics need it.
      db.exec('PRAGMA optimize')
    },

    async deleteIdempotencyKeys (olderThan, limit) {
      // On this (the requests') connection, holding the write lock: a batch keeps both waits short.
      return sql('DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at < ? LIMIT ?)')
        .run(olderThan.getTime(), limit).changes
    },

    async insertApiKey (key) {
      return insertApiKey(key)
    },

    async rotateApiKey (rotation) {
      return rotateApiKey.immediate(rotation)
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

    async recordApiKeyUses (uses) {
      recordApiKeyUses.immediate(uses)
    },

    async deleteApiKey (name) {
      sql('DELETE FROM api_keys WHERE name = ?').run(name)
    },

    async backup (file, options) {
      return await backupDatabase(db, sql, path, file, options)
    },

    async lastBackupAt () {
      const taken = sql('SELECT max(taken_at) FROM backups').pluck().get() as string | null
      // A database never backed up reports its creation (its first migration), so the backup alert reminds a new one too.
      return new Date(taken ?? sql(`SELECT applied_at FROM ${MIGRATIONS_TABLE} WHERE version = 1`).pluck().get() as string)
    },

    async secret (name) {
      sql('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)').run(name, randomBytes(32))
      return (sql('SELECT value FROM secrets WHERE name = ?').get(name) as { value: Buffer }).value
    }
  }
  return withStoreErrors(store, (err) => isSqliteUnavailable(err, db))
}
