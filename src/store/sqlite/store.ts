/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a
 * committed transaction is on disk before the call returns. Reads run on this
 * connection; creates are committed by the writer thread on its own. Several
 * processes may open the same file: writers take the lock in turn (busy timeout).
 */
import { randomBytes } from 'node:crypto'
import { realpathSync } from 'node:fs'
import type Database from 'better-sqlite3'
import type { Pet } from '../../schemas/pets.js'
import type { ApiKeyRecord, ListPetsOptions, NewPetRecord, Store } from '../store.js'
import { openConnection, statementCache } from './connection.js'
import { translateSqliteError } from './errors.js'
import { MIGRATIONS } from './migrations.js'
import { petIdAllocator } from './pet-ids.js'
import { findPetJson, rowToPet, type PetRow } from './rows.js'
import { WalIndexHeader } from './wal-index-header.js'
import { SqliteWriter } from './writer.js'
import { storeUnavailable } from '../store-errors.js'
import { exportPages } from '../export-pages.js'
import { PET_COLUMNS } from '../pet-fields.js'

interface ApiKeyRow { id: bigint, name: string, key_hash: string, created_at: string, revoked_at: string | null }

function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return { id: Number(row.id), name: row.name, keyHash: row.key_hash, createdAt: row.created_at, revokedAt: row.revoked_at }
}

const IMPORT_ROWS = 100

function insertPetsSql (rows: number): string {
  const row = `(${PET_COLUMNS.split(', ').map(() => '?').join(', ')})`
  return `INSERT INTO pets (${PET_COLUMNS}) VALUES ${Array(rows).fill(row).join(', ')}`
}

/**
 * Opens (creating when missing) the SQLite database at `path`.
 * @example const store = openSqliteStore('./data/petstore.db'); await store.migrate()
 */
export function openSqliteStore (path: string): Store {
  const db: Database.Database = openConnection(path)
  const sql = statementCache(db)
  const writer = new SqliteWriter(path)

  // Moves when any connection commits: another process's, the writer thread's or this one's.
  const walHeader = new WalIndexHeader(realpathSync(path))
  let generation = 0

  // Rows go in IMPORT_ROWS at a time: one statement per 100 rows costs half of one per row.
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
  })
  // Ids as createPets gives them, all taken before the first row goes in.
  const insertPets = db.transaction((pets: NewPetRecord[]) => {
    const nextId = petIdAllocator(sql)
    importPets(pets.map((pet) => ({ id: nextId(), ...pet })))
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

    petsVersion () {
      // A closed store serves no page from memory: 503, as every read.
      if (!db.open) throw storeUnavailable()
      if (walHeader.changed()) generation++
      return generation
    },

    async close () {
      await writer.close()
      if (db.open) db.close()
      walHeader.close()
    },

    async listPets ({ limit, status, afterId = 0 }: ListPetsOptions) {
      const rows = (status === undefined
        ? sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`).all(afterId, limit)
        : sql(`SELECT ${PET_COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`).all(status, afterId, limit)) as PetRow[]
      return rows.map(rowToPet)
    },

    findPetJson (id) {
      return findPetJson(sql, id)
    },

    async createPets (requests, idempotencyTtlMs) {
      const now = Date.now()
      return await writer.createPets({ requests, now, notBefore: now - idempotencyTtlMs })
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
      const row = sql('INSERT INTO api_keys (name, key_hash, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING *')
        .get(name, keyHash, new Date().toISOString()) as ApiKeyRow | undefined
      return row === undefined ? undefined : rowToApiKey(row)
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

    async deleteApiKey (name) {
      sql('DELETE FROM api_keys WHERE name = ?').run(name)
    },

    async secret (name) {
      sql('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)').run(name, randomBytes(32))
      return (sql('SELECT value FROM secrets WHERE name = ?').get(name) as { value: Buffer }).value
    }
  }
  return translateSqliteError(store, db)
}
