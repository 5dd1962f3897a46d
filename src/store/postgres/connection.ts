/**
 * The connections of a PostgreSQL store: a pool over libpq's address of one host or several
 * (host-list-pool.ts), set up the same way for every store, and the one way to run a
 * transaction on it.
 */
import pg from 'pg'
import { parseAddress } from './address.js'
import { hostListPool } from './host-list-pool.js'
import { PG_TYPES } from './rows.js'

export interface PoolOptions {
  /** Connections at most. */
  max: number
  /** Bounds connecting and every query, so an outage fails fast instead of hanging. */
  timeoutMs: number
  /** A standby's pool: several hosts without target_session_attrs mean prefer-standby, not read-write. */
  standby: boolean
}

/**
 * @example const pool = openPool('postgres://postgres@127.0.0.1/test', { max: 10, timeoutMs: 5_000, standby: false })
 */
export function openPool (url: string, { max, timeoutMs, standby }: PoolOptions): pg.Pool {
  const pool = hostListPool(parseAddress(url, standby ? 'prefer-standby' : 'read-write'), {
    max,
    connectTimeoutMs: timeoutMs,
    // The server's own, shorter timeouts are the role's defaults, recorded by migrate() (role-defaults.ts).
    query_timeout: timeoutMs,
    keepAlive: true,
    idleTimeoutMillis: 30_000,
    types: PG_TYPES
  })
  // An idle connection that dies (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  return pool
}

/**
 * Runs `work` between BEGIN and COMMIT on one connection of the pool; ROLLBACK when it throws.
 * @example await transaction(pool, async (client) => await client.query('UPDATE …'))
 */
export async function transaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  // After anything but an SQL error (lost, timed out mid-query) the connection's state is
  // unknown: it is discarded (the server rolls back), never given back to the pool.
  let broken = false
  // The pool listens for errors of idle connections only: without this, a connection lost
  // mid-transaction would emit 'error' with no listener and crash the process.
  const onLost = (): void => { broken = true }
  client.on('error', onLost)
  try {
    await client.query('BEGIN')
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    broken = !(err instanceof pg.DatabaseError)
    if (!broken) await client.query('ROLLBACK').catch(() => { broken = true })
    throw err
  } finally {
    if (!broken) client.removeListener('error', onLost)
    client.release(broken)
  }
}
