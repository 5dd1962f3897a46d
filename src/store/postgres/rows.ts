/** Rows of the PostgreSQL tables as pg returns them (BIGINT as an Int64, through PG_TYPES), and their mappers. */
import pg from 'pg'
import { parseInt64, type Int64 } from '../../schemas/int64.js'
import type { ApiKeyScope } from '../../schemas/scopes.js'
import type { ApiKeyRecord } from '../store.js'

export interface ApiKeyRow {
  id: Int64
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

const BIGINT_OID = 20

/** The pool's type parsers: BIGINT text read once, straight to an exact Int64 (pg-types would check it with a regex and keep the string). */
export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => oid === BIGINT_OID && format !== 'binary' ? parseInt64 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser']
}

/** A pet's columns, named as the API names them: each row pg returns is a Pet, mapped by no code of ours. */
export const PET_COLUMNS = 'id, name, category_id AS "categoryId", status'

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
