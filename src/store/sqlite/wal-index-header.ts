/**
 * Tells whether any connection, of any thread or process, has committed to a WAL
 * database since the last look, by reading the WAL-index header at the start of its
 * `-shm` file (https://www.sqlite.org/walformat.html, "The WAL-Index Header").
 *
 * Every commit rewrites that header, and it is what SQLite's own readers compare to
 * learn that the database changed: a read transaction starts from it. Reading it
 * takes one `pread`, where `PRAGMA data_version` opens and closes a read transaction
 * (two `fcntl` locks): 0.9 against 2.3 µs in a loop here.
 */
import { closeSync, openSync, readSync } from 'node:fs'

// The header is written twice, one copy after the other (48 bytes each): a commit caught
// halfway leaves the copies apart, which only reads as one more change.
const HEADER_BYTES = 96

// Closing any handle on a file drops every POSIX lock this process holds on it, SQLite's included
// (https://www.sqlite.org/howtocorrupt.html, 2.2): the stores of one process on one file share a
// handle, closed by the last of them, after its connections.
const handles = new Map<string, { fd: number, users: number }>()

function acquire (path: string): number {
  let handle = handles.get(path)
  if (handle === undefined) {
    handle = { fd: openSync(path, 'r'), users: 0 }
    handles.set(path, handle)
  }
  handle.users++
  return handle.fd
}

function release (path: string): void {
  const handle = handles.get(path)
  if (handle === undefined || --handle.users > 0) return
  handles.delete(path)
  closeSync(handle.fd)
}

export class WalIndexHeader {
  readonly #shmPath: string
  #fd: number | undefined
  readonly #seen = Buffer.alloc(HEADER_BYTES)
  readonly #read = Buffer.alloc(HEADER_BYTES)

  /**
   * @param databasePath the database file as SQLite opens it: symbolic links resolved, since
   *   SQLite keeps the `-shm` file next to the file a link points to
   * @example const header = new WalIndexHeader(realpathSync('/var/lib/petstore/petstore.db'))
   */
  constructor (databasePath: string) {
    this.#shmPath = `${databasePath}-shm`
  }

  /**
   * True when the header differs from the one read at the last call, or cannot be read whole:
   * whatever goes wrong here only costs a cache miss, and the read that follows meets the
   * database's own error.
   * @example if (header.changed()) generation++
   */
  changed (): boolean {
    try {
      // Opened with the first look: the first read transaction of a new database makes the file.
      this.#fd ??= acquire(this.#shmPath)
      if (readSync(this.#fd, this.#read, 0, HEADER_BYTES, 0) !== HEADER_BYTES) return true
    } catch {
      return true
    }
    if (this.#read.equals(this.#seen)) return false
    this.#read.copy(this.#seen)
    return true
  }

  /** Call once the store's connections are closed (see `handles`). */
  close (): void {
    if (this.#fd !== undefined) release(this.#shmPath)
    this.#fd = undefined
  }
}
