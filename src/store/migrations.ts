/**
 * The migration rules every adapter follows: each lists its schema versions, and
 * applies the pending ones inside one transaction that holds its migration lock.
 */

/** One schema version; applied in order, never edited once released. */
export interface Migration {
  version: number
  sql: string
}

/** The table every adapter keeps its applied versions in. */
export const MIGRATIONS_TABLE = 'schema_migrations'

/**
 * The migrations not yet applied, in ascending version order.
 * @throws Error when a version is listed twice: a released migration was copied instead of added
 * @example for (const migration of pendingMigrations([1], MIGRATIONS)) apply(migration)
 */
export function pendingMigrations (applied: readonly number[], migrations: readonly Migration[]): Migration[] {
  const versions = migrations.map((migration) => migration.version)
  if (new Set(versions).size !== versions.length) throw new Error(`migration versions must be unique: ${versions.join(', ')}`)
  const done = new Set(applied)
  return migrations.filter((migration) => !done.has(migration.version)).sort((a, b) => a.version - b.version)
}
