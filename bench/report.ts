/**
 * The report, in markdown: how it was measured, a table per workload (medians over the runs,
 * the spread of req/s), the service ÷ each other target run by run, and the scale curve.
 * It states figures; it never fails on them.
 */
import { cpus, release } from 'node:os'
import { REQUESTS, SCALE_WORKLOADS, type Workload } from './load.js'

/** The bench's options, as run.ts parses them and the report states them. */
export interface Options {
  duration: number
  warmup: number
  runs: number
  connections: number
  workloads: Workload[]
  animals: number
  postgres: string | undefined
  baseline: string | undefined
  scale: boolean
  sizes: number[]
  smoke: boolean
}

/** One measured run of one target on one workload. */
export interface Measurement {
  section: string
  target: string
  /** The service it is set against (`service`, `service, PostgreSQL`), or the database in the scale curve. */
  base: string
  workload: Workload
  run: number
  requests: number
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  failed: number
  cpuUs: number
  rssBytes: number
}

export interface ScaleFill { database: string, animals: number, seconds: number, bytes: number }

export interface ReportInput {
  options: Options
  command: string
  pinned: boolean
  loadTool: string
  loadAverages: [number, number]
  commit: string
  serviceArguments: string
  baseline: string | undefined
  measurements: Measurement[]
  fills: ScaleFill[]
  seconds: number
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const rate = (value: number): string => Math.round(value).toLocaleString('en-US')
const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 1)} ms`
const us = (value: number): string => `${value < 10 ? value.toFixed(1) : Math.round(value)} µs`
const mib = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MiB`
const times = (value: number): string => Number.isFinite(value) ? `${value.toFixed(2)}×` : '–'
/** The median of some values and, with more than one, their range: `12,345 (11,900–12,800)`. */
function spread (values: number[], format: (value: number) => string): string {
  return values.length < 2 ? format(median(values)) : `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`
}

function table (header: string[], rows: string[][]): string {
  return [header, header.map((_, index) => index === 0 ? '---' : '---:'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

/** The per-run ratios of a figure, the target's run n over its base's run n (the same minutes). */
function ratios (all: Measurement[], target: string, base: string, workload: string, figure: (m: Measurement) => number): number[] {
  const of = (name: string): Measurement[] => all.filter((m) => m.target === name && m.workload === workload)
  const bases = of(base)
  return of(target).flatMap((m) => {
    const b = bases.find((each) => each.run === m.run)
    return b === undefined ? [] : [figure(m) / figure(b)]
  })
}

function workloadTable (main: Measurement[], workload: Workload): string {
  const runs = main.filter((m) => m.workload === workload)
  const targets = [...new Set(runs.map((m) => m.target))]
  const rows = targets.map((target) => {
    const mine = runs.filter((m) => m.target === target)
    const base = mine[0]!.base
    const compared = target === base ? '' : spread(ratios(runs, base, target, workload, (m) => m.reqPerSec), times)
    return [target, spread(mine.map((m) => m.reqPerSec), rate), ms(median(mine.map((m) => m.p50Ms))), ms(median(mine.map((m) => m.p99Ms))),
      us(median(mine.map((m) => m.cpuUs))), mib(median(mine.map((m) => m.rssBytes))), String(mine.reduce((sum, m) => sum + m.failed, 0)), compared]
  })
  return `### ${workload}: ${REQUESTS[workload]}\n\n${table(['target', 'req/s (range)', 'p50', 'p99', 'CPU/req', 'peak RSS', 'failed', 'service ÷ this, req/s'], rows)}`
}

/** The service ÷ each other target, per workload: req/s, p99 and CPU per request, medians of the per-run ratios. */
function comparison (main: Measurement[], workloads: readonly Workload[]): string {
  const pairs = [...new Map(main.filter((m) => m.target !== m.base).map((m) => [m.target, m.base])).entries()]
  const cell = (target: string, base: string, workload: Workload, figure: (m: Measurement) => number): string => {
    const values = ratios(main, base, target, workload, figure)
    return values.length === 0 ? '–' : spread(values, times)
  }
  const section = (title: string, figure: (m: Measurement) => number): string =>
    `### ${title}\n\n${table(['', ...workloads], pairs.map(([target, base]) => [`${base} ÷ ${target}`, ...workloads.map((w) => cell(target, base, w, figure))]))}`
  return [
    '## The service against the others',
    'Each cell is the median of the per-run ratios (each run of the service over the run of the other target measured in the same minutes), and their range. ' +
      'req/s above 1.00×: the service serves more; p99 and CPU/req below 1.00×: the service is faster or spends less.',
    section('req/s', (m) => m.reqPerSec),
    section('p99', (m) => m.p99Ms),
    section('CPU per request', (m) => m.cpuUs)
  ].join('\n\n')
}

function scaleSection (input: ReportInput, scale: Measurement[]): string {
  const lines = ['## The scale curve', 'The service alone, filled by `petstore seed` (timed below), every size started afresh for each run and measured in turn within it.']
  for (const database of [...new Set(scale.map((m) => m.base))]) {
    const fills = input.fills.filter((fill) => fill.database === database)
    const cells = (workload: string, animals: number): string => {
      const mine = scale.filter((m) => m.workload === workload && m.target === `${database} ${animals}`)
      return mine.length === 0 ? '–' : `${rate(median(mine.map((m) => m.reqPerSec)))} req/s, p50 ${ms(median(mine.map((m) => m.p50Ms)))}, p99 ${ms(median(mine.map((m) => m.p99Ms)))}`
    }
    const p50 = (workload: string, animals: number): number => median(scale.filter((m) => m.workload === workload && m.target === `${database} ${animals}`).map((m) => m.p50Ms))
    const [smallest, largest] = [fills[0]!.animals, fills.at(-1)!.animals]
    lines.push(`### ${database}`, table(['animals', 'seeded in', ...(database === 'SQLite' ? ['file'] : []), ...SCALE_WORKLOADS.map((w) => `${w}: ${REQUESTS[w]}`)],
      [...fills.map((fill) => [rate(fill.animals), `${fill.seconds.toFixed(1)} s`, ...(database === 'SQLite' ? [mib(fill.bytes)] : []), ...SCALE_WORKLOADS.map((w) => cells(w, fill.animals))]),
        [`p50 at ${rate(largest)} ÷ at ${rate(smallest)}`, '', ...(database === 'SQLite' ? [''] : []), ...SCALE_WORKLOADS.map((w) => times(p50(w, largest) / p50(w, smallest)))]]))
  }
  return lines.join('\n\n')
}

/** The whole report. */
export function renderReport (input: ReportInput): string {
  const { options } = input
  const main = input.measurements.filter((m) => m.section === 'main')
  const scale = input.measurements.filter((m) => m.section === 'scale')
  const head = [
    `# Benchmark: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${input.commit}`,
    '',
    `- Command: \`${input.command}\`; ${Math.round(input.seconds)} s.`,
    `- Machine: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, Linux ${release()}, Node.js ${process.version}; load average ${input.loadAverages[0].toFixed(2)} at the start, ${input.loadAverages[1].toFixed(2)} at the end.`,
    `- Load: ${input.loadTool}, ${options.connections} connections over loopback; ${input.pinned ? 'servers on core 0, the load on core 1 (`taskset`); PostgreSQL unpinned' : 'nothing pinned'}.`,
    `- Each target on ${rate(options.animals)} animals, started afresh for each of ${options.runs} run(s); in each run every workload, the targets interleaved: ${options.warmup} s warm-up, ${options.duration} s measured. ` +
      'Medians over the runs; failed is their sum (statuses of 400 and up, socket errors); peak RSS is the high-water mark of the workload\'s run; CPU/req the user and system time of the target\'s processes over the measured seconds ÷ the requests.',
    `- The service as users run it: \`${input.serviceArguments}\`, filled by \`petstore seed\`, every feature on (request log at \`info\` to a file, metrics, the rate limit counting, never reached).` +
      (input.baseline === undefined ? '' : ` Beside it the ${input.baseline}, built in a worktree of its own and filled by its own \`petstore seed\`.`),
    '- The peers (bench/peers/) serve the same animals (`petstore export`): the Fastify app built from its ecosystem\'s plugins, and bare `node:http`, each on better-sqlite3 and on `pg`' +
      (options.postgres === undefined ? '; no PostgreSQL server given, so every PostgreSQL target is skipped.' : `; each PostgreSQL target on a schema of its own at ${new URL(options.postgres).host}, every table analyzed before the first run.`)
  ].join('\n')
  return [head, ...options.workloads.map((workload) => workloadTable(main, workload)), comparison(main, options.workloads), ...(scale.length === 0 ? [] : [scaleSection(input, scale)])].join('\n\n') + '\n'
}
