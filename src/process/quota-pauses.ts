/**
 * The pause a CPU quota makes the whole process take (cgroup `cpu.cfs_quota_us`, `cpu.max`: a
 * Kubernetes CPU limit): once a period's quota is spent, nothing of the process runs until the
 * next period, up to the period less the quota (85 ms of 100 at 15 % of a core), and it runs the
 * quota's share of the time. Read from the process's own cgroup, because the event loop's lateness
 * alone cannot tell such a pause from a queue of work, nor a wait for a connection from a slow
 * database (src/http/stages/admission.ts). Linux only; elsewhere, and without a quota, nothing.
 */
import { readFileSync } from 'node:fs'
import { UNLIMITED, type CpuQuota, type QuotaNow } from '../http/stages/admission.js'

/** The cgroup's `cpu.stat`, and what its quota does. */
interface Quota { statPath: string, effect: QuotaNow }

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
      const [quota, period] = [read(`${dir}/cpu.cfs_quota_us`), read(`${dir}/cpu.cfs_period_us`)].map(Number) as [number, number]
      // -1 (or no such file: NaN) is no quota.
      if (quota > 0 && period > 0) return quotaOf(`${dir}/cpu.stat`, quota, period)
    }
    return undefined
  }
  const v2 = lines.find((line) => line.startsWith('0::'))
  const max = v2 === undefined ? undefined : /^(\d+) (\d+)$/.exec(read(`/sys/fs/cgroup${v2.slice(3)}/cpu.max`)?.trim() ?? '')
  return max == null ? undefined : quotaOf(`/sys/fs/cgroup${v2!.slice(3)}/cpu.stat`, Number(max[1]), Number(max[2]))
}

/** A quota of `quotaUs` in each `periodUs`: a process past a core's worth is never stopped for long. */
function quotaOf (statPath: string, quotaUs: number, periodUs: number): Quota {
  return { statPath, effect: { pauseMs: Math.max(0, periodUs - quotaUs) / 1000, share: Math.min(1, quotaUs / periodUs) } }
}

function throttledSoFar (quota: Quota): number {
  return Number(/^nr_throttled (\d+)$/m.exec(read(quota.statPath) ?? '')?.[1] ?? 0)
}

/**
 * @param freshMs how old a read of the kernel's count may be: at most one read in each (the
 * admission stage looks every 12.5 ms at MAX_QUEUE_DELAY's default of 50)
 * @example const { pauseMs, share } = new QuotaPauses().now(performance.now())
 */
export class QuotaPauses implements CpuQuota {
  readonly #freshMs: number
  #quota: Quota | undefined
  #locatedAt = -Infinity
  #throttled = 0
  #readAt = -Infinity
  #throttledAt = -Infinity

  constructor (freshMs = 10) {
    this.#freshMs = freshMs
  }

  /** What the quota does, while it held the process back in the last two seconds (the pause going on now included); else nothing. */
  now (now: number): QuotaNow {
    // Found again each second: a process may be moved to another cgroup (the overload bench moves the service into its quota).
    if (now - this.#locatedAt > 1000) {
      this.#quota = quotaOfThisProcess()
      this.#locatedAt = now
      this.#readAt = -Infinity
    }
    const quota = this.#quota
    if (quota === undefined) return UNLIMITED
    if (now - this.#readAt > this.#freshMs) {
      const throttled = throttledSoFar(quota)
      if (throttled > this.#throttled) this.#throttledAt = now
      this.#throttled = throttled
      this.#readAt = now
    }
    return now - this.#throttledAt < 2000 ? quota.effect : UNLIMITED
  }
}
