/**
 * One SQLite connection, set up the same way in every thread and process that opens
 * the file.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'

/**
 * How long a statement waits for a lock another connection holds, its thread blocked meanwhile:
 * writers of other threads and processes (the writer thread, WORKERS, the CLI) hold it for one
 * transaction at most. On the main thread, the longest the event loop is held by the store: a
 * probe's timeout must exceed it (deploy/kubernetes).
 * @example new Database(path, { timeout: BUSY_TIMEOUT_MS })
 */
export const BUSY_TIMEOUT_MS = 5000

/**
 * WAL lets readers run beside the one writer; synchronous=FULL fsyncs the WAL at
 * every commit, so a 201 survives a power cut. Integers come back as bigint (exact int64).
 */
export function configureConnection (db: Database.Database): void {
  retryWhileBusy(() => db.pragma('journal_mode = WAL'))
  db.pragma('synchronous = FULL')
  db.defaultSafeIntegers(true)
}

// What Atomics.wait sleeps on: nobody ever notifies it, so each wait lasts its full time.
const NEVER_NOTIFIED = new Int32Array(new SharedArrayBuffer(4))

/** Blocks the thread: a statement tried again while another connection holds the lock must keep it. */
function sleepSync (ms: number): void {
  Atomics.wait(NEVER_NOTIFIED, 0, 0, ms)
}

// SQLITE_BUSY and its extended codes, SQLITE_BUSY_RECOVERY (another connection is rebuilding
// the WAL index after a crash) among them (https://www.sqlite.org/rescode.html#busy).
function isBusy (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'))
}

/**
 * Runs `run` again after `pauseMs` while it fails with SQLITE_BUSY, for at most the busy
 * timeout. Two cases need it: two processes turning a fresh file to WAL at once (`petstore
 * migrate` run twice, two instances started together), where the loser's lock upgrade would
 * deadlock, so SQLite answers SQLITE_BUSY at once without waiting; and the writer thread,
 * which asks for a held write lock more often than SQLite's busy handler would.
 */
export function retryWhileBusy<T> (run: () => T, pauseMs = 10): T {
  const deadline = Date.now() + BUSY_TIMEOUT_MS
  for (;;) {
    try {
      return run()
    } catch (err) {
      if (!isBusy(err) || Date.now() > deadline) throw err
      sleepSync(pauseMs)
    }
  }
}

/**
 * Opens (creating the file and its folder when missing) and configures a connection.
 * @example const db = openConnection('/var/lib/petstore/petstore.db')
 */
export function openConnection (path: string, busyTimeoutMs = BUSY_TIMEOUT_MS): Database.Database {
  mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { timeout: busyTimeoutMs })
  configureConnection(db)
  return db
}

/** Prepares a statement once per connection, on first use (the tables exist only after migrate()). */
export type Statements = (text: string) => Database.Statement

/** @example const sql = statementCache(db); sql('SELECT 1').get() */
export function statementCache (db: Database.Database): Statements {
  const cache = new Map<string, Database.Statement>()
  return (text) => {
    let statement = cache.get(text)
    if (statement === undefined) {
      statement = db.prepare(text)
      cache.set(text, statement)
    }
    return statement
  }
}
