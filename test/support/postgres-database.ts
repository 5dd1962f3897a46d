/**
 * A PostgreSQL database of its own for each test that asks, on the server itself and reached
 * directly or through a pooler that forwards any database name (PgBouncer's `* =`): a schema
 * would need `search_path` as a startup parameter, which such a pooler refuses.
 *
 * The databases are kept and reused, emptied to what CREATE DATABASE makes: on this server a
 * CREATE DATABASE costs about 0.4 s of CPU (it copies the template's 7.5 MB), 70 s of the
 * suite's 174. A test holds its database by an advisory lock on a session of its own, so a
 * test that dies frees it; the next holder empties it first.
 */
import pg from 'pg'

export interface PostgresDatabase {
  /** `via` with the database's name as its path. */
  url: string
  /** The database on the server itself, no pooler between. */
  directUrl: string
  /** Gives the database back; its next holder ends the connections still open to it. */
  drop: () => Promise<void>
}

/** The advisory locks' first key, "petstore test databases"; the second is the database name's hash. */
const LOCK_SPACE = 0x7e57db

function withDatabase (url: string, name: string): string {
  const withName = new URL(url)
  withName.pathname = `/${name}`
  return withName.href
}

/** Makes `name` what CREATE DATABASE makes: no session on it, no setting, nothing in any schema. */
async function empty (admin: pg.Client, serverUrl: string, name: string): Promise<void> {
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])
  await admin.query(`ALTER DATABASE ${name} RESET ALL`)
  const { rows } = await admin.query<{ role: string | null }>(`SELECT r.rolname AS role FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
    LEFT JOIN pg_roles r ON r.oid = s.setrole WHERE d.datname = $1`, [name])
  for (const { role } of rows) await admin.query(`ALTER ROLE ${role === null ? 'ALL' : pg.escapeIdentifier(role)} IN DATABASE ${name} RESET ALL`)
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, name) })
  await client.connect()
  try {
    const { rows: schemas } = await client.query<{ name: string }>(`SELECT nspname AS name FROM pg_namespace
      WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%'`)
    // PostgreSQL 15's public schema: owned by the database's owner, usable by all.
    await client.query(`${schemas.map(({ name }) => `DROP SCHEMA ${pg.escapeIdentifier(name)} CASCADE;`).join('')}
      CREATE SCHEMA public AUTHORIZATION pg_database_owner; GRANT USAGE ON SCHEMA public TO PUBLIC; COMMENT ON SCHEMA public IS 'standard public schema'`)
  } finally {
    await client.end()
  }
}

/**
 * Holds the first free database `petstore_<prefix>_<slot>` on the server of `serverUrl` (made on first
 * use, emptied on every other), reached at `via`.
 * @example const database = await createDatabase('postgres://postgres@127.0.0.1:5432/test', 'test', 'postgres://postgres@127.0.0.1:6432/test')
 */
export async function createDatabase (serverUrl: string, prefix: string, via = serverUrl): Promise<PostgresDatabase> {
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    for (let slot = 0; ; slot++) {
      const name = `petstore_${prefix}_${slot}`
      const { rows: [held] } = await admin.query<{ ours: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ours', [LOCK_SPACE, name])
      if (held?.ours !== true) continue
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (rowCount === 0) await admin.query(`CREATE DATABASE ${name}`)
      else await empty(admin, serverUrl, name)
      return { url: withDatabase(via, name), directUrl: withDatabase(serverUrl, name), drop: async () => { await admin.end() } }
    }
  } catch (err) {
    await admin.end()
    throw err
  }
}
