/**
 * The create transaction of a group commit: every animal of a batch, and its
 * Idempotency-Key, in one transaction and one fsync. Run by the writer thread.
 */
import type Database from 'better-sqlite3'
import { toInt64 } from '../../schemas/kinds.js'
import type { CreateOutcome, CreateRequest } from '../store.js'
import type { Statements } from './connection.js'
import { petIdAllocator } from './pet-ids.js'
import { findPetRow, rowToPet } from './rows.js'

interface IdempotencyRow { fingerprint: string, pet_id: bigint, created_at: bigint }

/** What the writer thread is asked: a batch, the time of the commit, and the oldest key still replayed. */
export interface CreateBatch {
  requests: CreateRequest[]
  now: number
  notBefore: number
}

/**
 * @returns runs one batch in an IMMEDIATE transaction (the write lock first: no upgrade deadlock)
 * @example const createPets = prepareCreatePets(db, statementCache(db)); createPets({ requests, now, notBefore })
 */
export function prepareCreatePets (db: Database.Database, sql: Statements): (batch: CreateBatch) => CreateOutcome[] {
  const transaction = db.transaction(({ requests, now, notBefore }: CreateBatch): CreateOutcome[] => {
    const nextId = petIdAllocator(sql)
    return requests.map((request): CreateOutcome => {
      const { pet, idempotency } = request
      if (idempotency !== undefined) {
        const seen = sql('SELECT fingerprint, pet_id, created_at FROM idempotency_keys WHERE scope = ? AND key = ?')
          .get(idempotency.scope, idempotency.key) as IdempotencyRow | undefined
        if (seen !== undefined && Number(seen.created_at) >= notBefore) {
          if (seen.fingerprint !== idempotency.fingerprint) return { kind: 'key_reused' }
          const row = findPetRow(sql, seen.pet_id)
          if (row !== undefined) return { kind: 'replayed', pet: rowToPet(row) }
        }
      }
      const id = nextId()
      sql('INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)').run(id, pet.name, pet.categoryId, pet.status)
      if (idempotency !== undefined) {
        sql('INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, pet_id, created_at) VALUES (?, ?, ?, ?, ?)')
          .run(idempotency.scope, idempotency.key, idempotency.fingerprint, id, now)
      }
      return { kind: 'created', pet: { id: toInt64(id), ...pet } }
    })
  })
  return (batch) => transaction.immediate(batch)
}
