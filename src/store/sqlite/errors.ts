import Database from 'better-sqlite3'

// Result codes a retry can cure (https://www.sqlite.org/rescode.html); matched by code, never by text.
const TRANSIENT = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOMEM)/

/**
 * Busy, I/O, a full disk and a connection already closed (shutting down) are StoreUnavailable.
 * @example withStoreErrors(store, (err) => isSqliteUnavailable(err, db))
 */
export function isSqliteUnavailable (err: unknown, db: Database.Database): boolean {
  return !db.open || (err instanceof Database.SqliteError && TRANSIENT.test(err.code))
}
