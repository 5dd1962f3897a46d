/**
 * Where each field of the API's Pet is stored, in the schema's order: both stores
 * select these columns, and build an animal's JSON body from them in SQL.
 */
import type { Pet } from '../schemas/pets.js'

export const PET_FIELDS = { id: 'id', name: 'name', categoryId: 'category_id', status: 'status' } as const satisfies Record<keyof Pet, string>

export const PET_COLUMNS = Object.values(PET_FIELDS).join(', ')
