/**
 * The pause a CPU quota makes the whole process take (cgroup `cpu.cfs_quota_us`, `cpu.max`: a
 * Kubernetes CPU limit): once a period's quota is spent, nothing of the process runs until the
 * next period, up to the period less the quota (85 ms of 100 at 15 % of a core). Read from the
 * process's own cgroup, because the event loop's lateness alone cannot tell such a pause from a
 * queue of work (src/http/admission.ts). Linux only; elsewhere, and without a quota, none.
 */
import { readFileSync } from 'node:fs'

/** The cgroup's `cpu.stat`, and the pause its quota makes: the period less the quota, in ms. */
interface Quota { statPath: string, pauseMs: number }

function read (path: string): string | undefined {
  try { return readFileSync(path, 'latin1') } catch { return undefined }
}

/** The quota of the process's cgroup: v1's `cpu` controller (its own mount), else v2's unified tree; undefined without one. */
function quotaOfThisProcess (): Quota | undefined {
  const lines = read('/proc/self/cgroup')?.split('\n') ?? []
  const v1 = lines.map((line) => line.split(':')).find((fields) => fields[1]?.split(',').includes('cpu') === true)
  if (v1 !== undefined) {
    for (const mount of ['cpu', 'cpu,cpuacct']) {
      const dir = `/sys/fs/cgroup/${mount}${v1[2]}`
      const [quota, period] = [read(`${dir}/cpu.cfs_quota_us`), read(`${dir}/cpu.cfs_period_us`)].map(Number)
      if (quota !== undefined && period !== undefined && quota > 0) return { statPath: `${dir}/cpu.stat`, pauseMs: Math.max(0, period - quota) / 1000 }
    }
    return undefined
  }
  const v2 = lines.find((line) => line.startsWith('0::'))
  const max = v2 === undefined ? undefined : /^(\d+) (\d+)$/.exec(read(`/sys/fs/cgroup${v2.slice(3)}/cpu.max`)?.trim() ?? '')
  return max == null ? undefined : { statPath: `/sys/fs/cgroup${v2!.slice(3)}/cpu.stat`, pauseMs: Math.max(0, Number(max[2]) - Number(max[1])) / 1000 }
}

function throttledSoFar (quota: Quota): number {
  return Number(/^nr_throttled (\d+)$/m.exec(read(quota.statPath) ?? '')?.[1] ?? 0)
}

/**
 * @param freshMs how old a read of the kernel's count may be: at most one read in each
 * @example const pauses = new QuotaPauses(10); const allowedMs = pauses.pauseMs(performance.now())
 */
export class QuotaPauses {
  readonly #freshMs: number
  #quota: Quota | undefined
  #locatedAt = -Infinity
  #throttled = 0
  #readAt = -Infinity
  #throttledAt = -Infinity

  constructor (freshMs: number) {
    this.#freshMs = freshMs
  }

  /** The pause the quota makes, while it held the process back in the last two seconds (the pause going on now included); else 0. */
  pauseMs (now: number): number {
    // Found again each second: a process may be moved to another cgroup (the overload bench moves the service into its quota).
    if (now - this.#locatedAt > 1000) {
      this.#quota = quotaOfThisProcess()
      this.#locatedAt = now
      this.#readAt = -Infinity
    }
    const quota = this.#quota
    if (quota === undefined) return 0
    if (now - this.#readAt > this.#freshMs) {
      const throttled = throttledSoFar(quota)
      if (throttled > this.#throttled) this.#throttledAt = now
      this.#throttled = throttled
      this.#readAt = now
    }
    return now - this.#throttledAt < 2000 ? quota.pauseMs : 0
  }
}
