/** The reports' markdown: a table per workload, ratios run by run, helpers; it states figures, never fails on them. */
import { cpus, release } from 'node:os'
import { request, type LoadResult, type Workload } from './load.js'
import { PINNED, ROOT, run } from './targets.js'

/** One measured run of one target on one workload. */
export interface Measurement extends LoadResult {
  target: string
  /** The target it is set against: its database's service, or in the scale curve its database's largest size. */
  base: string
  workload: Workload
  run: number
  cpuUs: number
  rssBytes: number
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const rate = (value: number): string => Math.round(value).toLocaleString('en-US')
export const ms = (value: number | null): string => value === null ? '–' : `${value.toFixed(value < 10 ? 2 : 1)} ms`
export const times = (value: number): string => Number.isFinite(value) ? `${value.toFixed(2)}×` : '–'
export const us = (value: number): string => `${value < 10 ? value.toFixed(1) : Math.round(value)} µs`
export const mib = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MiB`

/** The median of some values and, with more than one, their range: `12,345 (11,900–12,800)`; none: `–`. */
export function spread (values: number[], format: (value: number) => string): string {
  if (values.length === 0) return '–'
  const middle = format(median(values))
  return values.length < 2 ? middle : `${middle} (${format(Math.min(...values))}–${format(Math.max(...values))})`
}

/** A markdown table, its first `left` columns aligned left. */
export function table (header: string[], rows: string[][], left = 1): string {
  const align = header.map((_, index) => index < left ? '---' : '---:')
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

/** The report's first line (the commit, and whether the service's sources differ from it) and the machine's. */
export function heading (title: string): string {
  const changed = run(ROOT, 'git', ['status', '--porcelain', '--', 'src', 'package.json']) !== ''
  const commit = run(ROOT, 'git', ['rev-parse', '--short', 'HEAD']) + (changed ? ' (with changes)' : '')
  const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')
  const pinning = PINNED ? 'servers on core 0, the load on core 1' : 'nothing pinned'
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores (${pinning}), Linux ${release()}`
  return `# ${title}: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit}\n\n` +
    `- Command: \`${command.replace(/(\/\/[^:/@\s]+):[^@/\s]*@/g, '$1:***@')}\`; ` +
    `${Math.round(performance.now() / 1000)} s. Machine: ${machine}, Node.js ${process.version}.`
}

/** A table per workload, a row per target: the medians over the runs, and req/s's range. */
export function workloadTables (runs: Measurement[]): string {
  return [...new Set(runs.map((m) => m.workload))].map((workload) => {
    const rows = [...new Set(runs.map((m) => m.target))].map((target) => {
      const mine = runs.filter((m) => m.target === target && m.workload === workload)
      const of = (figure: (m: Measurement) => number): number => median(mine.map(figure))
      const sum = (figure: (m: Measurement) => number): string => String(mine.reduce((all, m) => all + figure(m), 0))
      return [target, spread(mine.map((m) => m.reqPerSec), rate), ms(of((m) => m.p50Ms)), ms(of((m) => m.p99Ms)),
        us(of((m) => m.cpuUs)), mib(of((m) => m.rssBytes)), sum((m) => m.failed), sum((m) => m.refused)]
    })
    const header = ['target', 'req/s (range)', 'p50', 'p99', 'CPU/req', 'peak RSS', 'failed', 'refused']
    return `### ${workload}: ${request(workload)}\n\n${table(header, rows)}`
  }).join('\n\n')
}

/** Per workload, each base's `figure` ÷ each target set against it: the median of the per-run ratios, their range. */
export function ratios (runs: Measurement[], title: string, figure: (m: Measurement) => number): string {
  const workloads = [...new Set(runs.map((m) => m.workload))]
  const pairs = [...new Map(runs.filter((m) => m.target !== m.base).map((m) => [m.target, m.base]))]
  return `### ${title}\n\n` + table(['', ...workloads], pairs.map(([target, base]) => [`${base} ÷ ${target}`,
    ...workloads.map((workload) => {
      const mine = runs.filter((m) => m.workload === workload)
      // The base's run n over the other's run n: the same minutes.
      return spread(mine.filter((m) => m.target === base).map((b) =>
        figure(b) / figure(mine.find((m) => m.target === target && m.run === b.run)!)), times)
    })]))
}
