/** Rows of the PostgreSQL tables as pg returns them (BIGINT as an Int64, through PG_TYPES), and their mappers. */
import pg from 'pg'
import { parseInt64, type Int64 } from '../../schemas/int64.js'
import { columnsToApiKey, type ApiKeyColumns, type ApiKeyRecord } from '../store.js'

/** Instants as Date (pg's own parser), BIGINT as an Int64 (PG_TYPES). */
export type ApiKeyRow = ApiKeyColumns<Date, Int64>

const BIGINT_OID = 20

/** The pool's type parsers: BIGINT text read once, straight to an exact Int64 (pg-types would check it with a regex and keep the string). */
export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => oid === BIGINT_OID && format !== 'binary' ? parseInt64 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser']
}

/** A pet's columns, named as the API names them: each row pg returns is a Pet, mapped by no code of ours. */
export const PET_COLUMNS = 'id, name, category_id AS "categoryId", status'

export function rowToApiKey (row: ApiKeyRow): ApiKeyRecord {
  return columnsToApiKey(row, (date) => date, Number)
}
