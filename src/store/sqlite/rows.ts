/** Rows of the `pets` table as better-sqlite3 returns them, and an animal's JSON body as SQLite writes it. */
import { toInt64, type Int64 } from '../../schemas/kinds.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import { PET_COLUMNS, PET_FIELDS } from '../pet-fields.js'
import type { Statements } from './connection.js'

// json_object's arguments: 'id', id, 'name', name, 'categoryId', category_id, …
const JSON_OBJECT_ARGUMENTS = Object.entries(PET_FIELDS).map(([field, column]) => `'${field}', ${column}`).join(', ')

/** A row of `pets` with safe integers on. */
export interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus }

/** @example rowToPet({ id: 1n, name: 'Rex', category_id: 3n, status: 'sold' }) // { id: 1, …, categoryId: 3 } */
export function rowToPet (row: PetRow): Pet {
  return { id: toInt64(row.id), name: row.name, categoryId: toInt64(row.category_id), status: row.status }
}

/** The row of one animal, on whichever connection `sql` prepares for (reader or writer thread). */
export function findPetRow (sql: Statements, id: Int64): PetRow | undefined {
  return sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`).get(id) as PetRow | undefined
}

/**
 * One animal's JSON body, written by SQLite: the bytes the Pet schema's serializer would
 * write (fields in order, exact integers, the same string escapes), with no row object between.
 */
export function findPetJson (sql: Statements, id: Int64): string | undefined {
  return sql(`SELECT json_object(${JSON_OBJECT_ARGUMENTS}) FROM pets WHERE id = ?`).pluck().get(id) as string | undefined
}
