/**
 * A cgroup of the `cpu` controller with a CPU quota, for the tests of what a quota does (as a
 * Kubernetes CPU limit holds a pod): v1's `cpu.cfs_quota_us`, or v2's `cpu.max`. Needs root.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'

export interface QuotaGroup {
  /** Moves a process, every thread of it, into the group. */
  add: (pid: number) => void
  /** The periods in which the group was held back so far. */
  throttled: () => number
  /** Removes the group; its processes must have left it (exited). */
  remove: () => void
}

/**
 * A group allowed `quotaMs` of CPU in each `periodMs`, or why this machine has none.
 * @example const group = quotaGroup('petstore-test', 100, 20); if (typeof group !== 'string') group.add(child.pid!)
 */
export function quotaGroup (name: string, periodMs: number, quotaMs: number): QuotaGroup | string {
  if (process.getuid?.() !== 0) return 'not root'
  let dir: string
  if (existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')) {
    dir = `/sys/fs/cgroup/cpu/${name}`
    mkdirSync(dir)
    writeFileSync(`${dir}/cpu.cfs_period_us`, String(periodMs * 1000))
    writeFileSync(`${dir}/cpu.cfs_quota_us`, String(quotaMs * 1000))
  } else if (existsSync('/sys/fs/cgroup/cgroup.subtree_control') && readFileSync('/sys/fs/cgroup/cgroup.subtree_control', 'utf8').trim().split(' ').includes('cpu')) {
    dir = `/sys/fs/cgroup/${name}`
    mkdirSync(dir)
    writeFileSync(`${dir}/cpu.max`, `${quotaMs * 1000} ${periodMs * 1000}`)
  } else {
    return 'no cgroup cpu controller'
  }
  return {
    add: (pid) => { writeFileSync(`${dir}/cgroup.procs`, String(pid)) },
    throttled: () => Number(/^nr_throttled (\d+)$/m.exec(readFileSync(`${dir}/cpu.stat`, 'utf8'))?.[1]),
    remove: () => { rmdirSync(dir) }
  }
}
