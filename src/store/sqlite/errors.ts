import Database from 'better-sqlite3'
import type { Store } from '../store.js'
import { translateStoreErrors } from '../store-errors.js'

// Result codes a retry can cure (https://www.sqlite.org/rescode.html); matched by code, never by text.
const TRANSIENT = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PROTOCOL|NOMEM)/

/** Busy, I/O and a connection already closed (shutting down) are `unavailable`. */
export function translateSqliteError (store: Store, db: Database.Database): Store {
  return translateStoreErrors(store, (err) =>
    !db.open || (err instanceof Database.SqliteError && TRANSIENT.test(err.code)))
}
