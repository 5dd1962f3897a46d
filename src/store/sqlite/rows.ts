/** Rows of the SQLite tables as better-sqlite3 returns them (safe integers on), and their mappers. */
import { toInt64, type Int64 } from '../../schemas/int64.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import { columnsToApiKey, type ApiKeyColumns, type ApiKeyRecord } from '../store.js'
import type { Statements } from './connection.js'

export interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus }
/** Instants as ISO 8601 text, integers as bigint. */
export type ApiKeyRow = ApiKeyColumns<string, bigint>

export const PET_COLUMNS = 'id, name, category_id, status'

/** @example rowToPet({ id: 1n, name: 'Rex', category_id: 3n, status: 'sold' }) // { id: 1, …, categoryId: 3 } */
export function rowToPet (row: PetRow): Pet {
  return { id: toInt64(row.id), name: row.name, categoryId: toInt64(row.category_id), status: row.status }
}

export function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return columnsToApiKey(row, (text) => new Date(text), Number)
}

/** The row of one animal, on whichever connection `sql` prepares for (reader or writer thread). */
export function findPetRow (sql: Statements, id: Int64): PetRow | undefined {
  return sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`).get(id) as PetRow | undefined
}
