/**
 * The connections of a PostgreSQL store: a pool over libpq's address of one host or several
 * (host-list-pool.ts), set up the same way for every store; every call takes its turn for one
 * (Slots, bounded in time), but the readiness probe's, for which the pool keeps one more.
 */
import pg from 'pg'
import { Slots } from '../slots.js'
import { parseAddress } from './address.js'
import { hostListPool } from './host-list-pool.js'
import { PG_TYPES } from './rows.js'

export interface PoolOptions {
  /** Connections the calls take in turn. */
  max: number
  /** Bounds connecting and every query, so an outage fails fast instead of hanging. */
  timeoutMs: number
  /** How long a call beyond the next turn waits for its turn at most. */
  poolWaitMs: number
  /** A standby's pool: several hosts without target_session_attrs mean prefer-standby, not read-write. */
  standby: boolean
  /** Creates one statement commits together (create-pets.ts): a connection's turn serves as many; else 1. */
  perTurn?: number
}

export interface Connections {
  /** The turns: a call holds one while it uses a connection. */
  slots: Slots
  /** The pool itself, for a turn already held (the create batcher's commit). */
  pool: pg.Pool
  /** One statement, in its turn. */
  query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>
  /** `work` between BEGIN and COMMIT on one connection, in its turn. */
  transaction: <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>
  /** `SELECT 1` on the connection kept for it: readiness never waits behind the calls. */
  ping: () => Promise<void>
}

/**
 * @example const { query } = openConnections('postgres://postgres@127.0.0.1/test', { max: 10, timeoutMs: 5_000, poolWaitMs: 1_000, standby: false })
 */
export function openConnections (url: string, { max, timeoutMs, poolWaitMs, standby, perTurn }: PoolOptions): Connections {
  const pool = openPool(url, max + 1, timeoutMs, standby)
  const slots = new Slots(max, poolWaitMs, perTurn)
  // A statement's turn ends in pg's callback, so the next waiter's is sent before this answer is written.
  function query<R extends pg.QueryResultRow> (text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return new Promise((resolve, reject) => {
      const send = (): void => {
        pool.query<R>(text, values, (err, result) => {
          slots.release()
          if (err == null) resolve(result)
          else reject(err)
        })
      }
      if (slots.tryTake()) send()
      else slots.wait({ since: 0, state: 'waiting', granted: send, refused: reject })
    })
  }
  async function inTurn<T> (use: () => Promise<T>): Promise<T> {
    await slots.take()
    try {
      return await use()
    } finally {
      slots.release()
    }
  }
  return {
    slots,
    pool,
    query,
    transaction: (work) => inTurn(() => transaction(pool, work)),
    ping: async () => { await pool.query('SELECT 1') }
  }
}

function openPool (url: string, max: number, timeoutMs: number, standby: boolean): pg.Pool {
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

/** Runs `work` between BEGIN and COMMIT on one connection of the pool; ROLLBACK when it throws. */
async function transaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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
