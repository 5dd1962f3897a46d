/**
 * The create transaction of a group commit: every animal of a batch, and its
 * Idempotency-Key, in one transaction and one fsync. Run by the writer thread.
 */
import type Database from 'better-sqlite3'
import { toInt64 } from '../../schemas/int64.js'
import type { CreateResult, IdempotencyClaim, NewPetRecord } from '../store.js'
import type { Statements } from './connection.js'
import { petIdAllocator } from './pet-ids.js'
import { findPetRow, rowToPet } from './rows.js'

export interface CreateRequest {
  pet: NewPetRecord
  claim?: IdempotencyClaim
}

interface IdempotencyRow { fingerprint: string, pet_id: bigint }

/**
 * @returns runs one batch in an IMMEDIATE transaction (the write lock first: no upgrade deadlock)
 * @example const createPets = prepareCreatePets(db, statementCache(db)); createPets(requests)
 */
export function prepareCreatePets (db: Database.Database, sql: Statements): (requests: CreateRequest[]) => CreateResult[] {
  const transaction = db.transaction((requests: CreateRequest[]): CreateResult[] => {
    const nextId = petIdAllocator(sql)
    const now = Date.now()
    return requests.map(({ pet, claim }): CreateResult => {
      if (claim !== undefined) {
        // The write lock is held: nobody records this key between the look and the insert.
        const seen = sql('SELECT fingerprint, pet_id FROM idempotency_keys WHERE scope = ? AND key = ? AND created_at >= ?')
          .get(claim.scope, claim.key, claim.notBefore.getTime()) as IdempotencyRow | undefined
        const row = seen === undefined ? undefined : findPetRow(sql, seen.pet_id)
        if (seen !== undefined && row !== undefined) return { kind: 'key_taken', fingerprint: seen.fingerprint, pet: rowToPet(row) }
      }
      const id = nextId()
      sql('INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)').run(id, pet.name, pet.categoryId, pet.status)
      if (claim !== undefined) {
        sql('INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, pet_id, created_at) VALUES (?, ?, ?, ?, ?)')
          .run(claim.scope, claim.key, claim.fingerprint, id, now)
      }
      return { kind: 'created', pet: { id: toInt64(id), ...pet } }
    })
  })
  return (requests) => transaction.immediate(requests)
}
