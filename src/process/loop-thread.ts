/**
 * The event loop's thread as the kernel schedules it: the first two fields of the main thread's
 * `/proc/self/schedstat`, the ns it ran on a CPU and the ns it waited in a run queue while it had
 * work. A busy neighbour, a noisy node and a CPU quota's pause (a Kubernetes CPU limit) show as a
 * wait; the service's own work as time run. Linux only: elsewhere, undefined
 * (src/http/stages/admission.ts then takes every lateness of the loop for its own).
 */
import { openSync, readSync } from 'node:fs'
import type { ThreadTimes } from '../http/stages/admission.js'

/** The file, opened once and read from its start each time: 3 µs a read, where readFileSync takes 38. */
let schedstat: number | undefined
const text = Buffer.alloc(64)

/** @example const { ranMs, waitedMs } = loopThreadTimes() ?? { ranMs: 0, waitedMs: 0 } */
export function loopThreadTimes (): ThreadTimes | undefined {
  try {
    schedstat ??= openSync('/proc/self/schedstat', 'r')
    const [ran, waited] = text.toString('latin1', 0, readSync(schedstat, text, 0, text.length, 0)).split(' ').map(Number)
    return { ranMs: ran! / 1e6, waitedMs: waited! / 1e6 }
  } catch {
    return undefined
  }
}
