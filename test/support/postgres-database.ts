/**
 * A PostgreSQL database of its own for each test that asks, made and dropped on the server
 * itself and reached directly or through a pooler that forwards any database name (PgBouncer's
 * `* =`): a schema would need `search_path` as a startup parameter, which such a pooler refuses.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'

export interface PostgresDatabase {
  /** `via` with the database's name as its path. */
  url: string
  /** The database on the server itself, no pooler between. */
  directUrl: string
  /** DROP DATABASE … WITH (FORCE): connections still open to it, a pooler's too, are ended. */
  drop: () => Promise<void>
}

async function runStatement (serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

function withDatabase (url: string, name: string): string {
  const withName = new URL(url)
  withName.pathname = `/${name}`
  return withName.href
}

/**
 * Creates the database `<prefix>_<12 random hex digits>` on the server of `serverUrl`, reached at `via`.
 * @example const database = await createDatabase('postgres://postgres@127.0.0.1:5432/test', 'test', 'postgres://postgres@127.0.0.1:6432/test')
 */
export async function createDatabase (serverUrl: string, prefix: string, via = serverUrl): Promise<PostgresDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  await runStatement(serverUrl, `CREATE DATABASE ${name}`)
  return {
    url: withDatabase(via, name),
    directUrl: withDatabase(serverUrl, name),
    drop: async () => await runStatement(serverUrl, `DROP DATABASE ${name} WITH (FORCE)`)
  }
}
