import pg from 'pg'
import { NoIdLeft } from '../store-errors.js'

// SQLSTATEs a retry can cure (https://www.postgresql.org/docs/current/errcodes-appendix.html):
// classes 08 connection exception, 53 insufficient resources, 57 operator intervention
// (57P01 admin shutdown, 57014 query canceled…), 40 transaction rollback (serialization,
// deadlock); 25006 a read-only transaction (a standby during failover); 55P03 lock timeout.
const TRANSIENT_SQLSTATE = /^(08|53|57|40)...$|^25006$|^55P03$/
// Socket errors of Node (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EAI_AGAIN…), not its ERR_* programming errors.
const SOCKET_ERROR = /^E(?!RR_)[A-Z_]+$/

/** True when the database could not be reached or answer in time: a retry may succeed. */
export function isPostgresUnavailable (err: unknown): boolean {
  if (!(err instanceof Error)) return false
  if (err instanceof pg.DatabaseError) return TRANSIENT_SQLSTATE.test(err.code ?? '')
  const code = (err as NodeJS.ErrnoException).code
  if (typeof code === 'string') return SOCKET_ERROR.test(code)
  // pg reports a lost connection, its timeouts and a closed pool as plain Errors without a code.
  return err.constructor === Error
}

/**
 * The identity sequence of `pets` at its end (2200H sequence_generator_limit_exceeded, once an
 * import took 2^63 − 1) becomes NoIdLeft; any other error stays as it is.
 * @example await insert().catch((err: unknown) => { throw orNoIdLeft(err) })
 */
export function orNoIdLeft (err: unknown): unknown {
  return err instanceof pg.DatabaseError && err.code === '2200H' ? new NoIdLeft() : err
}
