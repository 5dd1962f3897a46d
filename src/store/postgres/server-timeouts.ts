/**
 * The server's own timeouts, kept as defaults of the service's role in its database
 * (`ALTER ROLE CURRENT_USER IN DATABASE … SET`), which PostgreSQL applies to every new
 * connection, through a pooler or not. A transaction-mode pooler refuses them as startup
 * parameters, and a SET on a pooled connection would reach whichever client used it next.
 */
import pg from 'pg'

/** Runs one statement in the migration's transaction. */
export type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>

export interface ServerTimeouts {
  /** Milliseconds a statement may run (statement_timeout). */
  statementMs: number
  /** Milliseconds a transaction may sit idle (idle_in_transaction_session_timeout). */
  idleInTransactionMs: number
}

/** The settings' names and values, as SQL spells them. */
function settings (timeouts: ServerTimeouts): Array<[string, number]> {
  return [['statement_timeout', timeouts.statementMs], ['idle_in_transaction_session_timeout', timeouts.idleInTransactionMs]]
}

/**
 * The timeouts that fit a client waiting `timeoutMs` for any answer.
 * @example serverTimeouts(5_000) // { statementMs: 4000, idleInTransactionMs: 20000 }
 */
export function serverTimeouts (timeoutMs: number): ServerTimeouts {
  return {
    // The server gives up first: a statement the client stopped waiting for must not commit
    // after it (a seed or a key reported failed, then there). Cancelled, it rolls back.
    statementMs: Math.ceil(timeoutMs * 0.8),
    // A partition can leave the server holding our transaction (and its advisory locks) open:
    // the server ends it, and keepalive notices the dead socket.
    idleInTransactionMs: 4 * timeoutMs
  }
}

/**
 * Sets the timeouts on the migration's own connection, opened before they were recorded:
 * the values every new connection gets, so no connection differs. Before any SET LOCAL,
 * which then wins until COMMIT.
 * @example await setServerTimeouts(query, serverTimeouts(5_000))
 */
export async function setServerTimeouts (query: Query, timeouts: ServerTimeouts): Promise<void> {
  for (const [name, ms] of settings(timeouts)) await query(`SET ${name} = ${ms}`)
}

/**
 * Records the timeouts as the role's defaults in this database, unless they already are;
 * under the migration lock, as two concurrent ALTER ROLE on one role fail.
 * @example await recordServerTimeouts(query, serverTimeouts(5_000))
 */
export async function recordServerTimeouts (query: Query, timeouts: ServerTimeouts): Promise<void> {
  const wanted = settings(timeouts).map(([name, ms]) => `${name}=${ms}`)
  const { rows } = await query(`SELECT current_database() AS database, EXISTS (
      SELECT FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
      WHERE d.datname = current_database() AND s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)
        AND s.setconfig @> $1::text[]) AS recorded`, [wanted])
  const { database, recorded } = rows[0] as { database: string, recorded: boolean }
  if (recorded) return
  for (const [name, ms] of settings(timeouts)) {
    await query(`ALTER ROLE CURRENT_USER IN DATABASE ${pg.escapeIdentifier(database)} SET ${name} = ${ms}`)
  }
}
