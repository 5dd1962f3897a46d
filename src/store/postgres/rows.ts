/** Rows of the PostgreSQL tables as pg returns them (BIGINT as a decimal string), and their mappers. */
import { parseInt64 } from '../../schemas/kinds.js'
import type { Pet, PetStatus } from '../../schemas/pets.js'
import type { ApiKeyScope } from '../../schemas/scopes.js'
import type { ApiKeyRecord } from '../store.js'

export interface PetRow { id: string, name: string, category_id: string, status: PetStatus }
export interface ApiKeyRow {
  id: string
  name: string
  key_hash: string
  /** Comma-separated. */
  scopes: string
  created_at: Date
  expires_at: Date | null
  lifetime_seconds: number | null
  rate_limit: number | null
  last_used_at: Date | null
  retires_at: Date | null
  revoked_at: Date | null
}

export const PET_COLUMNS = 'id, name, category_id, status'

/** @example rowToPet({ id: '1', name: 'Rex', category_id: '3', status: 'sold' }) // { id: 1, …, categoryId: 3 } */
export function rowToPet (row: PetRow): Pet {
  return { id: parseInt64(row.id), name: row.name, categoryId: parseInt64(row.category_id), status: row.status }
}

export function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    name: row.name,
    keyHash: row.key_hash,
    scopes: row.scopes.split(',') as ApiKeyScope[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lifetimeSeconds: row.lifetime_seconds,
    rateLimit: row.rate_limit,
    lastUsedAt: row.last_used_at,
    retiresAt: row.retires_at,
    revokedAt: row.revoked_at
  }
}
