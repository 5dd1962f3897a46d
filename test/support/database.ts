/**
 * Direct SQL on a test database, for what the API cannot do: age a row, read
 * a table as it is at rest.
 */
import Database from 'better-sqlite3'
import pg from 'pg'

/**
 * Runs one statement on the database at `url` (sqlite:PATH or postgres://) and returns its rows.
 * Placeholders are `?` for both.
 * @example await query(server.database.url, 'SELECT key_hash FROM api_keys')
 */
export async function query (url: string, text: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { timeout: 5000 })
    try {
      const statement = db.prepare(text)
      return statement.reader ? statement.all(...params) as Array<Record<string, unknown>> : (statement.run(...params), [])
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    let n = 0
    return (await client.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as Array<Record<string, unknown>>
  } finally {
    await client.end()
  }
}
