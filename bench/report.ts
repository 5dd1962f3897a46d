/**
 * The closed-loop report in markdown (a table per workload, the service ÷ each other target, the scale curve)
 * and the helpers the overload run's report shares. It states figures; it never fails on them.
 */
import { cpus, release } from 'node:os'
import { REQUESTS, SCALE_WORKLOADS, type LoadResult, type Workload } from './load.js'

/** One measured run of one target on one workload. */
export interface Measurement extends LoadResult {
  target: string
  /** The service it is set against (`service`, `service, PostgreSQL`), or the database in the scale curve. */
  base: string
  workload: Workload
  run: number
  cpuUs: number
  rssBytes: number
}

export interface ScaleFill { database: string, animals: number, seconds: number, bytes: number }

export interface ReportInput {
  options: { duration: number, warmup: number, runs: number, connections: number, animals: number, postgres?: string }
  workloads: Workload[]
  pinned: boolean
  loadAverages: [number, number]
  commit: string
  serviceArguments: string
  baseline: string | undefined
  main: Measurement[]
  scale: Measurement[]
  fills: ScaleFill[]
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const rate = (value: number): string => Math.round(value).toLocaleString('en-US')
export const ms = (value: number | null): string => value === null ? '–' : `${value.toFixed(value < 10 ? 2 : 1)} ms`
export const times = (value: number): string => Number.isFinite(value) ? `${value.toFixed(2)}×` : '–'
const us = (value: number): string => `${value < 10 ? value.toFixed(1) : Math.round(value)} µs`
const mib = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MiB`

/** The median of some values and, with more than one, their range: `12,345 (11,900–12,800)`. */
export function spread (values: number[], format: (value: number) => string): string {
  const middle = format(median(values))
  return values.length < 2 ? middle : `${middle} (${format(Math.min(...values))}–${format(Math.max(...values))})`
}

/** Prose written over several source lines: each line break and the indent after it become one space. */
export function prose (strings: TemplateStringsArray, ...values: unknown[]): string {
  return String.raw({ raw: strings }, ...values).replace(/\n\s*/g, ' ')
}

/** A markdown table, its first `left` columns aligned left. */
export function table (header: string[], rows: string[][], left = 1): string {
  const align = header.map((_, index) => index < left ? '---' : '---:')
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

/** The report's first line and the machine's; the seconds since the bench began. */
export function heading (title: string, commit: string): string {
  const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')
  return `# ${title}: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit}\n\n` +
    `- Command: \`${command.replace(/(\/\/[^:/@\s]+):[^@/\s]*@/g, '$1:***@')}\`; ` +
    `${Math.round(performance.now() / 1000)} s. ` +
    `Machine: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, Linux ${release()}, Node.js ${process.version}.`
}

function workloadTable (runs: Measurement[], workload: Workload): string {
  const rows = [...new Set(runs.map((m) => m.target))].map((target) => {
    const mine = runs.filter((m) => m.target === target)
    const of = (figure: (m: Measurement) => number): number => median(mine.map(figure))
    return [target, spread(mine.map((m) => m.reqPerSec), rate), ms(of((m) => m.p50Ms)), ms(of((m) => m.p99Ms)),
      us(of((m) => m.cpuUs)), mib(of((m) => m.rssBytes)), String(mine.reduce((sum, m) => sum + m.failed, 0))]
  })
  const header = ['target', 'req/s (range)', 'p50', 'p99', 'CPU/req', 'peak RSS', 'failed']
  return `### ${workload}: ${REQUESTS[workload]}\n\n${table(header, rows)}`
}

/** The service ÷ each other target, per workload: req/s, p99 and CPU per request, medians of the per-run ratios. */
function comparison (main: Measurement[], workloads: Workload[]): string {
  const pairs = [...new Map(main.filter((m) => m.target !== m.base).map((m) => [m.target, m.base]))]
  const section = (title: string, figure: (m: Measurement) => number): string => `### ${title}\n\n` +
    table(['', ...workloads], pairs.map(([target, base]) => [`${base} ÷ ${target}`, ...workloads.map((w) => {
      const runs = main.filter((m) => m.workload === w)
      // The service's run n over the other's run n: the same minutes.
      return spread(runs.filter((m) => m.target === base).map((mine) =>
        figure(mine) / figure(runs.find((m) => m.target === target && m.run === mine.run)!)), times)
    })]))
  return ['## The service against the others',
    prose`Each cell is the median of the per-run ratios (each run of the service over the run of the other target
      measured in the same minutes), and their range. req/s above 1.00×: the service serves more; p99 and CPU/req
      below 1.00×: the service is faster or spends less.`,
    section('req/s', (m) => m.reqPerSec), section('p99', (m) => m.p99Ms),
    section('CPU per request', (m) => m.cpuUs)].join('\n\n')
}

function scaleSection (fills: ScaleFill[], scale: Measurement[]): string {
  const lines = ['## The scale curve',
    prose`The service alone, filled by \`petstore seed\` (timed below), every size started afresh for each run and
      measured in turn within it.`]
  for (const database of [...new Set(scale.map((m) => m.base))]) {
    const sizes = fills.filter((fill) => fill.database === database)
    const file = (cell: string): string[] => database === 'SQLite' ? [cell] : []
    const of = (workload: string, animals: number, figure: (m: Measurement) => number): number => median(scale
      .filter((m) => m.workload === workload && m.target === `${database} ${animals}`).map(figure))
    const p50 = (w: string, animals: number): number => of(w, animals, (m) => m.p50Ms)
    const cell = (w: string, animals: number): string => `${rate(of(w, animals, (m) => m.reqPerSec))} req/s, ` +
      `p50 ${ms(p50(w, animals))}, p99 ${ms(of(w, animals, (m) => m.p99Ms))}`
    const [smallest, largest] = [sizes[0]!.animals, sizes.at(-1)!.animals]
    const rows = sizes.map((fill) => [rate(fill.animals), `${fill.seconds.toFixed(1)} s`, ...file(mib(fill.bytes)),
      ...SCALE_WORKLOADS.map((w) => cell(w, fill.animals))])
    rows.push([`p50 at ${rate(largest)} ÷ at ${rate(smallest)}`, '', ...file(''),
      ...SCALE_WORKLOADS.map((w) => times(p50(w, largest) / p50(w, smallest)))])
    const header = ['animals', 'seeded in', ...file('file'), ...SCALE_WORKLOADS.map((w) => `${w}: ${REQUESTS[w]}`)]
    lines.push(`### ${database}`, table(header, rows))
  }
  return lines.join('\n\n')
}

/** The whole report of the closed-loop bench. */
export function renderReport (input: ReportInput): string {
  const { options, workloads, main, scale } = input
  const { postgres } = options
  const [start, end] = input.loadAverages.map((load) => load.toFixed(2))
  const baseline = input.baseline === undefined ? '' : `; beside it the ${input.baseline}`
  const databases = postgres === undefined
    ? 'no PostgreSQL server given: every PostgreSQL target skipped'
    : `PostgreSQL at ${new URL(postgres).host}, a schema for each target`
  const pinning = input.pinned ? 'servers on core 0, the load on core 1' : 'nothing pinned'
  const head = [
    `${heading('Benchmark', input.commit)} Load average ${start} at the start, ${end} at the end.`,
    prose`- Load: autocannon, ${options.connections} connections; ${pinning}. ${rate(options.animals)} animals;
      ${options.runs} run(s), each target started afresh for each; ${options.warmup} s warm-up, ${options.duration} s
      measured; ${databases}. How each target runs and what each figure is: bench/README.md.`,
    `- The service: \`${input.serviceArguments}\`, as shipped${baseline}.`
  ].join('\n')
  const tables = workloads.map((workload) => workloadTable(main.filter((m) => m.workload === workload), workload))
  const scaled = scale.length === 0 ? [] : [scaleSection(input.fills, scale)]
  return [head, ...tables, comparison(main, workloads), ...scaled].join('\n\n') + '\n'
}
