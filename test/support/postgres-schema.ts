/**
 * A PostgreSQL schema of its own, reached by a URL that puts it first in
 * `search_path`: the bench gets an empty database on a shared server without the
 * right to create databases (the tests make databases: test/support/postgres-database.ts).
 */
import { randomBytes } from 'node:crypto'
import { query } from './database.js'

export interface PostgresSchema {
  /** The server's URL with `options=-c search_path=<schema>`. */
  url: string
  /** DROP SCHEMA … CASCADE. */
  drop: () => Promise<void>
}

/**
 * Creates the schema `<prefix>_<12 random hex digits>` on the server of `adminUrl`.
 * @example const schema = await createSchema('postgres://postgres@127.0.0.1/test', 'bench'); await schema.drop()
 */
export async function createSchema (adminUrl: string, prefix: string): Promise<PostgresSchema> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`
  await query(adminUrl, `CREATE SCHEMA ${schema}`)
  const url = new URL(adminUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.href, drop: async () => { await query(adminUrl, `DROP SCHEMA ${schema} CASCADE`) } }
}
