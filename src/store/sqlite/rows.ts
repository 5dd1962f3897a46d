/** Rows of the `pets` table as better-sqlite3 returns them, and the one bridge to the domain's Pet. */
import { toInt64, type Int64 } from '../../schemas/kinds.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import type { Statements } from './connection.js'

/** A row of `pets` with safe integers on. */
export interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus }

export const PET_COLUMNS = 'id, name, category_id, status'

/** @example rowToPet({ id: 1n, name: 'Rex', category_id: 3n, status: 'sold' }) // { id: 1, …, categoryId: 3 } */
export function rowToPet (row: PetRow): Pet {
  return { id: toInt64(row.id), name: row.name, categoryId: toInt64(row.category_id), status: row.status }
}

/** The row of one animal, on whichever connection `sql` prepares for (reader or writer thread). */
export function findPetRow (sql: Statements, id: Int64): PetRow | undefined {
  return sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`).get(id) as PetRow | undefined
}
