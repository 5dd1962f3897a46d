// What Atomics.wait sleeps on: nobody ever notifies it, so each wait lasts its full time.
const NEVER_NOTIFIED = new Int32Array(new SharedArrayBuffer(4))

/**
 * Blocks the thread for `ms`: for the few places that must wait without giving up
 * the thread (a SQLite statement or transaction tried again while another holds the
 * lock, the last log lines at exit).
 * @example sleepSync(10)
 */
export function sleepSync (ms: number): void {
  Atomics.wait(NEVER_NOTIFIED, 0, 0, ms)
}
