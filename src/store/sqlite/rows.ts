/** Rows of the SQLite tables as better-sqlite3 returns them (safe integers on), and their mappers. */
import { toInt64, type Int64 } from '../../schemas/int64.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import type { ApiKeyScope } from '../../schemas/scopes.js'
import type { ApiKeyRecord } from '../store.js'
import type { Statements } from './connection.js'

export interface PetRow { id: bigint, name: string, category_id: bigint, status: PetStatus }
export interface ApiKeyRow {
  id: bigint
  name: string
  key_hash: string
  /** Comma-separated. */
  scopes: string
  created_at: string
  expires_at: string | null
  lifetime_seconds: bigint | null
  rate_limit: bigint | null
  last_used_at: string | null
  retires_at: string | null
  revoked_at: string | null
}

const instant = (text: string | null): Date | null => text === null ? null : new Date(text)

export const PET_COLUMNS = 'id, name, category_id, status'

/** @example rowToPet({ id: 1n, name: 'Rex', category_id: 3n, status: 'sold' }) // { id: 1, …, categoryId: 3 } */
export function rowToPet (row: PetRow): Pet {
  return { id: toInt64(row.id), name: row.name, categoryId: toInt64(row.category_id), status: row.status }
}

export function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    name: row.name,
    keyHash: row.key_hash,
    scopes: row.scopes.split(',') as ApiKeyScope[],
    createdAt: new Date(row.created_at),
    expiresAt: instant(row.expires_at),
    lifetimeSeconds: row.lifetime_seconds === null ? null : Number(row.lifetime_seconds),
    rateLimit: row.rate_limit === null ? null : Number(row.rate_limit),
    lastUsedAt: instant(row.last_used_at),
    retiresAt: instant(row.retires_at),
    revokedAt: instant(row.revoked_at)
  }
}

/** The row of one animal, on whichever connection `sql` prepares for (reader or writer thread). */
export function findPetRow (sql: Statements, id: Int64): PetRow | undefined {
  return sql(`SELECT ${PET_COLUMNS} FROM pets WHERE id = ?`).get(id) as PetRow | undefined
}
