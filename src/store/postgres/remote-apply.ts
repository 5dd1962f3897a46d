/**
 * `synchronous_commit = remote_apply`, kept as a default of the service's role in its database
 * (as server-timeouts.ts keeps the timeouts): with a synchronous standby serving reads, a
 * commit returns once the standby has applied it, so a 201 is visible to the next read on
 * any instance. Recorded by every process started with a read URL; never removed by one
 * started without (removing it is the operator's step: docs/deployment.md).
 */
import pg from 'pg'
import type { Query } from './server-timeouts.js'

const SETTING = 'synchronous_commit=remote_apply'

/**
 * Sets remote_apply on the migration's connection, and records it as the role's default in
 * this database unless it already is; under the migration lock, as the timeouts are.
 * @example await recordRemoteApply(query)
 */
export async function recordRemoteApply (query: Query): Promise<void> {
  await query('SET synchronous_commit = remote_apply')
  const { rows } = await query(`SELECT current_database() AS database, EXISTS (
      SELECT FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
      WHERE d.datname = current_database() AND s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)
        AND s.setconfig @> $1::text[]) AS recorded`, [[SETTING]])
  const { database, recorded } = rows[0] as { database: string, recorded: boolean }
  if (!recorded) await query(`ALTER ROLE CURRENT_USER IN DATABASE ${pg.escapeIdentifier(database)} SET synchronous_commit = remote_apply`)
}
