/**
 * Where the service's log lines go. The lines logged during one turn of the event
 * loop are written together, synchronously, right after it (setImmediate): under
 * load one write(2) carries the lines of a score of requests, and no line waits
 * longer than the turn that logged it. Writing through the thread pool
 * (pino.destination with sync: false, or an fs stream) cost the main thread about
 * three times as much per line (docs/decisions.md).
 */
import { writeSync } from 'node:fs'
import { sleepSync } from './sleep-sync.js'

// A full non-blocking pipe: what is left is tried again a little later.
const RETRY_MS = 10
// At exit, how long to wait for a full pipe to drain before the last lines are given up.
const EXIT_PATIENCE_MS = 1_000

function isWouldBlock (err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'EAGAIN' || code === 'EWOULDBLOCK'
}

export class TurnWriter {
  readonly #fd: number
  /** Lines logged since the last write. */
  #pending: string[] = []
  /** The unwritten end of a block the fd would not take at once; written before the lines. */
  #rest: Buffer | undefined
  #scheduled = false

  /**
   * Writes to `fd`; what is pending when the process exits is written then.
   * @example pino({}, new TurnWriter(1))
   */
  constructor (fd: number) {
    this.#fd = fd
    process.on('exit', () => this.flushSync())
  }

  /** pino's stream interface: one line, ending in a newline. */
  write (line: string): boolean {
    this.#pending.push(line)
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flushLater)
    }
    return true
  }

  readonly #flushLater = (): void => {
    this.#scheduled = false
    if (!this.#writeAll()) {
      this.#scheduled = true
      setTimeout(this.#flushLater, RETRY_MS).unref()
    }
  }

  /** Writes everything pending now, waiting (at most a second) for a full pipe. */
  flushSync (): void {
    const deadline = Date.now() + EXIT_PATIENCE_MS
    while (!this.#writeAll() && Date.now() < deadline) sleepSync(RETRY_MS)
  }

  /** @returns false when the fd would block, with what is left kept for the next try */
  #writeAll (): boolean {
    for (;;) {
      if (this.#rest === undefined) {
        if (this.#pending.length === 0) return true
        this.#rest = Buffer.from(this.#pending.join(''))
        this.#pending = []
      }
      try {
        while (this.#rest.length > 0) this.#rest = this.#rest.subarray(writeSync(this.#fd, this.#rest))
      } catch (err) {
        if (isWouldBlock(err)) return false
        // Another error (EPIPE: nobody reads any more) drops the block: a log must never stop the service.
      }
      this.#rest = undefined
    }
  }
}
