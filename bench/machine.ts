/**
 * The facts of the machine a report was measured on: without them a figure
 * cannot be compared with another.
 */
import { readFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'

export interface MachineFacts {
  cpuModel: string
  cores: number
  memoryGiB: number
  kernel: string
  node: string
  /** The 1-minute load average when the bench began: a busy neighbour shows here. */
  loadAverage: number
  date: string
}

function cpuModel (): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (match !== null) return match[1]!.trim()
  } catch {}
  return cpus()[0]?.model ?? 'unknown'
}

/**
 * Reads the facts now.
 * @example machineFacts().cpuModel // 'AMD EPYC'
 */
export function machineFacts (): MachineFacts {
  return {
    cpuModel: cpuModel(),
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30 * 10) / 10,
    kernel: `${process.platform} ${release()}`,
    node: process.version,
    loadAverage: loadavg()[0]!,
    date: new Date().toISOString()
  }
}

// Linux counts CPU time in ticks of 1/100 s (USER_HZ).
const TICKS_PER_SECOND = 100

/** CPU seconds the whole machine has been busy, every core and the hypervisor's steal included (0 without /proc/stat). */
function machineBusySeconds (): number {
  try {
    // cpu  user nice system idle iowait irq softirq steal …: everything but idle and iowait is busy.
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    return (fields.reduce((sum, value) => sum + value, 0) - fields[3]! - fields[4]!) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** What was running besides the bench, in the second before a run. */
export interface Quiet {
  /** The share of one core the machine was busy in the last second before the run, the bench idle. */
  busyShare: number
  /** Seconds spent waiting for it to fall under QUIET_SHARE. */
  waitedSeconds: number
}

/** Busier than this between runs, with nothing of the bench's running, is somebody else's work. */
export const QUIET_SHARE = 0.1

/**
 * Waits, at most `maxWaitSeconds`, for a second in which the machine is busy under a tenth of a
 * core while the bench itself idles: other work on a shared machine was what made runs disagree.
 * @example const { busyShare } = await waitForQuietMachine(60)
 */
export async function waitForQuietMachine (maxWaitSeconds: number): Promise<Quiet> {
  const started = performance.now()
  for (;;) {
    const before = machineBusySeconds()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const busyShare = machineBusySeconds() - before
    const waitedSeconds = (performance.now() - started) / 1000 - 1
    if (busyShare < QUIET_SHARE || waitedSeconds >= maxWaitSeconds) return { busyShare, waitedSeconds }
  }
}
