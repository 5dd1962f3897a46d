/**
 * From runs to figures: every run of a target and workload is kept, and the
 * report quotes their medians (a noisy neighbour spoils one run, not the median).
 */
import type { LoadResult } from './load.js'
import type { Quiet } from './machine.js'

/** One run: a target freshly started, warmed up, then measured. */
export interface Measurement {
  /** The section it belongs to (`main`, `workers`, `scale`). */
  group: string
  target: string
  workload: string
  result: LoadResult
  peakRssBytes: number
  /** CPU time of the target's processes during the measured seconds, divided by the requests answered. */
  cpuUsPerRequest: number
  /** How busy the machine was, and how long the bench waited, before the run started. */
  quiet: Quiet
}

/** The runs of one target and workload, reduced. */
export interface Summary {
  group: string
  target: string
  workload: string
  runs: number
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  peakRssBytes: number
  cpuUsPerRequest: number
  /** Summed over the runs, not a median: one failed request is one too many. */
  non2xx: number
  socketErrors: number
}

/**
 * The middle value (the mean of the two middle ones for an even count).
 * @example median([3, 1, 2]) // 2
 */
export function median (values: number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * One Summary per group, target and workload, in the order they were first measured.
 * @example summarize(measurements).find((s) => s.target === 'ceiling' && s.workload === 'get')
 */
export function summarize (measurements: Measurement[]): Summary[] {
  const groups = new Map<string, Measurement[]>()
  for (const measurement of measurements) {
    const key = `${measurement.group}\u0000${measurement.target}\u0000${measurement.workload}`
    groups.set(key, [...(groups.get(key) ?? []), measurement])
  }
  return [...groups.values()].map((runs) => ({
    group: runs[0]!.group,
    target: runs[0]!.target,
    workload: runs[0]!.workload,
    runs: runs.length,
    reqPerSec: median(runs.map((run) => run.result.reqPerSec)),
    p50Ms: median(runs.map((run) => run.result.p50Ms)),
    p99Ms: median(runs.map((run) => run.result.p99Ms)),
    peakRssBytes: median(runs.map((run) => run.peakRssBytes)),
    cpuUsPerRequest: median(runs.map((run) => run.cpuUsPerRequest)),
    non2xx: runs.reduce((sum, run) => sum + run.result.non2xx, 0),
    socketErrors: runs.reduce((sum, run) => sum + run.result.socketErrors, 0)
  }))
}

/**
 * The summary of one target and workload in a group, if it was measured.
 * @example findSummary(summaries, 'main', 'ceiling', 'list')?.reqPerSec
 */
export function findSummary (summaries: Summary[], group: string, target: string, workload: string): Summary | undefined {
  return summaries.find((summary) => summary.group === group && summary.target === target && summary.workload === workload)
}
