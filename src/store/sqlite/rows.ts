/** Rows of the SQLite tables as better-sqlite3 returns them (safe integers on), and their mappers. */
import { toInt64, type Int64 } from '../../schemas/kinds.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import type { ApiKeyRecord } from '../store.js'
import type { Statements } from './connection.js'

export interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus }
export interface ApiKeyRow { id: bigint, name: string, key_hash: string, created_at: string, revoked_at: string | null }

export const PET_COLUMNS = 'id, name, category_id, status'

/** @example rowToPet({ id: 1n, name: 'Rex', category_id: 3n, status: 'sold' }) // { id: 1, …, categoryId: 3 } */
export function rowToPet (row: PetRow): Pet {
  return { id: toInt64(row.id), name: row.name, categoryId: toInt64(row.category_id), status: row.status }
}

export function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return { id: Number(row.id), name: row.name, keyHash: row.key_hash, createdAt: row.created_at, revokedAt: row.revoked_at }
}

/** The row of one animal, on whichever connection `sql` prepares for (reader or writer thread). */
export function findPetRow (sql: Statements, id: Int64): PetRow | undefined {
  return sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`).get(id) as PetRow | undefined
}
