/**
 * The settings every connection of the service must have, kept as defaults of its role in its
 * database (`ALTER ROLE CURRENT_USER IN DATABASE … SET`), which PostgreSQL applies to every new
 * connection, through a pooler or not: a transaction-mode pooler refuses them as startup
 * parameters, and a SET on a pooled connection would reach whichever client used it next.
 * - The server's own timeouts, shorter than the client's.
 * - With a read URL, `synchronous_commit = remote_apply`: a commit returns once the synchronous
 *   standby has applied it, so a 201 is visible to the next read on any instance. Never removed
 *   by a process started without a read URL (that is the operator's step: docs/deployment.md).
 */
import pg from 'pg'

/** Runs one statement in the migration's transaction. */
export type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>

/** Each setting's name and value, as SQL spells them. */
export type RoleDefaults = ReadonlyArray<readonly [name: string, value: string]>

/**
 * The defaults that fit a client waiting `timeoutMs` for any answer.
 * @example roleDefaults(5_000, false) // [['statement_timeout', '4000'], ['idle_in_transaction_session_timeout', '20000']]
 */
export function roleDefaults (timeoutMs: number, remoteApply: boolean): RoleDefaults {
  return [
    // The server gives up first: a statement the client stopped waiting for must not commit
    // after it (a seed or a key reported failed, then there). Cancelled, it rolls back.
    ['statement_timeout', String(Math.ceil(timeoutMs * 0.8))],
    // A partition can leave the server holding our transaction (and its advisory locks) open:
    // the server ends it, and keepalive notices the dead socket.
    ['idle_in_transaction_session_timeout', String(4 * timeoutMs)],
    ...(remoteApply ? [['synchronous_commit', 'remote_apply'] as const] : [])
  ]
}

/**
 * Sets the defaults on the migration's own connection, opened before they were recorded: the
 * values every new connection gets, so no connection differs. Before any SET LOCAL, which then
 * wins until COMMIT.
 * @example await setRoleDefaults(query, roleDefaults(5_000, false))
 */
export async function setRoleDefaults (query: Query, defaults: RoleDefaults): Promise<void> {
  for (const [name, value] of defaults) await query(`SET ${name} = ${value}`)
}

/**
 * Records the defaults of the role in this database that it lacks: one read of
 * pg_db_role_setting, then an ALTER ROLE for each; under a lock of the role's own, as two
 * concurrent ALTER ROLE on one role and database fail, whatever schema each instance migrates.
 * @example await recordRoleDefaults(query, roleDefaults(5_000, true))
 */
export async function recordRoleDefaults (query: Query, defaults: RoleDefaults): Promise<void> {
  const { rows } = await query(`SELECT current_database() AS database, COALESCE((
      SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
      WHERE d.datname = current_database() AND s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)), '{}') AS recorded`)
  const { database, recorded } = rows[0] as { database: string, recorded: string[] }
  for (const [name, value] of defaults) {
    if (recorded.includes(`${name}=${value}`)) continue
    await query(`ALTER ROLE CURRENT_USER IN DATABASE ${pg.escapeIdentifier(database)} SET ${name} = ${value}`)
  }
}
