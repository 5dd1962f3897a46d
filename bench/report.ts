/**
 * The report, in markdown: the machine, the command, a table per workload with
 * every figure also as a ratio to the ceiling measured in the same run (and to the
 * baseline build, when one was measured), and the issue's targets marked met or
 * not met. It states figures; it never fails on them.
 */
import type { LoadTool } from './load.js'
import { QUIET_SHARE, type MachineFacts, type Quiet } from './machine.js'
import type { BenchOptions } from './options.js'
import { findSummary, type Summary } from './stats.js'
import { COST_WORKLOADS, FEATURE_STEPS, FEATURE_TEXTS } from './feature-steps.js'
import { JSON_SERVER_REQUESTS, WORKLOAD_REQUESTS, type Workload } from './workloads.js'
import { RATE_LIMIT_NEVER_REACHED } from './targets.js'

export interface ScaleSize {
  animals: number
  /** `seed` or `import`: the command that filled the database. */
  loadedBy: string
  loadSeconds: number
  databaseBytes: number
}

/** The other build measured beside the service (--baseline). */
export interface BaselineFacts {
  /** Its name in the tables: `baseline (2f7e686)`. */
  target: string
  commit: string
  subject: string
  /** The node arguments of its own `npm start`. */
  serviceArguments: string[]
}

export interface ReportInput {
  facts: MachineFacts
  command: string
  options: BenchOptions
  tool: LoadTool
  /** taskset was found and the machine has two cores or more. */
  pinned: boolean
  summaries: Summary[]
  /** Before each run, how busy the machine was and how long the bench waited. */
  quiet: Quiet[]
  scaleSizes: ScaleSize[]
  /** The node arguments the service was started with (those of `npm start`). */
  serviceArguments: string[]
  baseline: BaselineFacts | undefined
  elapsedSeconds: number
  /** What broke: the reasons the bench exits non-zero. */
  problems: string[]
}

const SCALE_WORKLOADS = ['list', 'deep-list', 'get'] as const
const SCALE_REQUESTS: Record<typeof SCALE_WORKLOADS[number], string> = {
  list: '`GET /v1/pets?limit=20`',
  'deep-list': '`GET /v1/pets?limit=20&cursor=…`, 1000 cursors at random positions in the deeper half',
  get: '`GET /v1/pets/{id}`, id random in 1..N'
}

/** The shapes of docs/deployment.md measured by --deployments, in the report's order; the first is the base of the ratios. */
export const DEPLOYMENT_SHAPES = ['one process, SQLite', 'WORKERS=2, SQLite', 'one instance, PostgreSQL', 'two instances, PostgreSQL'] as const

/** The peers of the main comparison (bench/peers/), by their names in the tables. */
export const PEERS = {
  fastify: 'Fastify, memory',
  sqlite: 'node:http + SQLite',
  pg: 'node:http + pg'
} as const

/** The service on PostgreSQL, measured beside the pg peer: the base of that peer's ratio. */
export const SERVICE_ON_POSTGRES = 'service, PostgreSQL'

/** Each peer and the service it is set against: the pg peer against the service on PostgreSQL. */
const PEER_BASES: ReadonlyArray<readonly [string, string]> = [[PEERS.fastify, 'service'], [PEERS.sqlite, 'service'], [PEERS.pg, SERVICE_ON_POSTGRES]]

/** @example rate(12345.6) // '12,346' */
export function rate (value: number): string {
  return Math.round(value).toLocaleString('en-US')
}

/** @example ms(1.234) // '1.23 ms' */
export function ms (value: number): string {
  return `${value.toFixed(value < 10 ? 2 : 1)} ms`
}

/** @example mib(64 * 2 ** 20) // '64 MiB'; mib(2 ** 19) // '0.5 MiB' */
export function mib (bytes: number): string {
  if (bytes === 0) return 'n/a'
  const value = bytes / 2 ** 20
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} MiB`
}

/** @example us(41.26) // '41 µs'; us(0) // 'n/a' */
export function us (micros: number): string {
  return micros === 0 ? 'n/a' : `${micros < 10 ? micros.toFixed(1) : Math.round(micros)} µs`
}

/** @example ratio(8, 10) // '0.80×'; ratio(134, 36597) // '0.0037×' */
export function ratio (value: number | undefined, base: number | undefined): string {
  if (value === undefined || base === undefined || base === 0 || Number.isNaN(value) || Number.isNaN(base)) return '–'
  const quotient = value / base
  // Two significant digits below 0.1, so a tiny ratio does not print as 0.00×.
  return `${quotient < 0.1 ? quotient.toPrecision(2) : quotient.toFixed(quotient >= 100 ? 0 : quotient >= 10 ? 1 : 2)}×`
}

function failures (summary: Summary): string {
  return summary.socketErrors === 0 ? String(summary.non2xx) : `${summary.non2xx} (+${summary.socketErrors} socket errors)`
}

function table (header: string[], rows: string[][]): string {
  const align = header.map((_, index) => index === 0 ? '---' : '---:')
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
}

function settings (input: ReportInput): string {
  const { options, tool, pinned } = input
  const pinning = pinned
    ? 'each server pinned to core 0 and the load generator to core 1 (`taskset`), except in the WORKERS section and where a deployment shape runs two processes'
    : 'nothing pinned (`taskset` missing or a single core): server and load share the cores'
  return [
    `- Load: ${tool.name} ${tool.version}, ${options.connections} connections over loopback, ${pinning}.`,
    `- Each target runs each workload ${options.runs} time(s), interleaved (service, ${input.baseline === undefined ? '' : 'baseline, '}ceiling${options.peers ? ', the peers' : ''}${options.jsonServer ? ', json-server' : ''}, again…), ` +
      `each run a fresh process on a fresh copy of its data: ${options.warmup} s warm-up, then ${options.duration} s measured.`,
    `- Figures are medians over the runs; non-2xx is the sum over the runs. ${options.animals.toLocaleString('en-US')} animals.`,
    `- The service as \`npm start\` runs it (\`node ${input.serviceArguments.join(' ')}\`), SQLite file (WAL, synchronous=FULL: every create is durable), ` +
      `logs at \`info\` to a file, metrics and every plugin on, the rate limit counting (\`RATE_LIMIT=${RATE_LIMIT_NEVER_REACHED}\`, never reached).`,
    ...(input.baseline === undefined
      ? []
      : [`- The ${input.baseline.target}: commit ${input.baseline.commit.slice(0, 12)} (${input.baseline.subject}) in a git worktree of its own, ` +
          `built, filled by its own \`petstore import\` and started as the service is (\`node ${input.baseline.serviceArguments.join(' ')}\`, same settings, same core).`]),
    '- The ceiling: bench/ceiling.ts, bare `node:http` with node\'s default flags, the same animals in memory, the least real work for the same answers.',
    ...(options.peers ? [peersSettings(input)] : []),
    ...(options.jsonServer ? ['- json-server 0.17.4 with its own CLI (`--quiet`) on a db.json of the same animals; it writes the file on every create.'] : [])
  ].join('\n')
}

function peersSettings (input: ReportInput): string {
  const postgres = input.options.postgres
  return [
    `- The peers (bench/peers/, compiled like the ceiling, no auth, pinned like the rest): \`${PEERS.fastify}\`, Fastify 5 with the service's TypeBox schemas over the animals in memory; ` +
      `\`${PEERS.sqlite}\`, bare \`node:http\` and better-sqlite3 on a file of its own (WAL, synchronous=FULL), concurrent creates in one transaction at 64 rows or after 1 ms`,
    postgres === undefined
      ? '; no PostgreSQL server given (`--postgres` or `TEST_DATABASE_URL`): the pg peer and the service on PostgreSQL are skipped.'
      : `; \`${PEERS.pg}\`, bare \`node:http\` and pg with the service's three queries (unnamed), on a pool of the service's default size, at ${serverOf(postgres)}. ` +
        `Beside it \`${SERVICE_ON_POSTGRES}\`, the service on PostgreSQL (\`petstore import\` into a schema of its own per run, as the pg peer has); PostgreSQL itself is not pinned.`
  ].join('')
}

function workloadSection (input: ReportInput, workload: Workload): string {
  const get = (target: string): Summary | undefined => findSummary(input.summaries, 'main', target, workload)
  const ceiling = get('ceiling')
  const peer = get('json-server')
  const baselineTarget = input.baseline?.target
  const baseline = baselineTarget === undefined ? undefined : get(baselineTarget)
  const targets = ['service', SERVICE_ON_POSTGRES, ...(baselineTarget === undefined ? [] : [baselineTarget]), 'ceiling', ...Object.values(PEERS), 'json-server']
  const rows = targets.flatMap((target) => {
    const summary = get(target)
    if (summary === undefined) return []
    return [[
      target, rate(summary.reqPerSec), ms(summary.p50Ms), ms(summary.p99Ms), mib(summary.peakRssBytes), us(summary.cpuUsPerRequest), failures(summary),
      ratio(summary.reqPerSec, ceiling?.reqPerSec), ratio(summary.p99Ms, ceiling?.p99Ms), ratio(summary.peakRssBytes, ceiling?.peakRssBytes),
      ratio(summary.cpuUsPerRequest, ceiling?.cpuUsPerRequest), ratio(summary.reqPerSec, peer?.reqPerSec),
      ...(baselineTarget === undefined ? [] : [ratio(summary.reqPerSec, baseline?.reqPerSec), ratio(summary.p99Ms, baseline?.p99Ms), ratio(summary.peakRssBytes, baseline?.peakRssBytes)])
    ]]
  })
  const header = [
    'target', 'req/s', 'p50', 'p99', 'peak RSS', 'CPU/req', 'non-2xx', 'req/s ÷ ceiling', 'p99 ÷ ceiling', 'RSS ÷ ceiling', 'CPU/req ÷ ceiling', '÷ json-server',
    ...(baselineTarget === undefined ? [] : ['req/s ÷ baseline', 'p99 ÷ baseline', 'RSS ÷ baseline'])
  ]
  const peerLine = input.options.jsonServer ? `\n\njson-server: ${JSON_SERVER_REQUESTS[workload]}.` : ''
  return `### ${workload}: ${WORKLOAD_REQUESTS[workload]}${peerLine}\n\n${table(header, rows)}`
}

interface Goal { text: string, met: boolean | undefined }

function verdict (goal: Goal): string {
  return `- ${goal.text}: **${goal.met === undefined ? 'not measured' : goal.met ? 'met' : 'not met'}**`
}

/** The service's targets, each in one line, from the medians: ahead of the peer a user would pick for each workload. */
function goals (input: ReportInput): string {
  const get = (target: string, workload: Workload): Summary | undefined => findSummary(input.summaries, 'main', target, workload)
  const all = input.options.workloads
  const atLeast = (service: string, peer: string, workload: Workload, floor: number): Goal => {
    const mine = get(service, workload)
    const theirs = get(peer, workload)
    const met = mine === undefined || theirs === undefined ? undefined : mine.reqPerSec >= floor * theirs.reqPerSec
    return { text: `${workload}: ${service} req/s ≥ ${floor === 1 ? '' : `${floor}× `}${peer}'s: ${ratio(mine?.reqPerSec, theirs?.reqPerSec)}`, met }
  }
  const each = (label: string, quotient: (workload: Workload) => [number | undefined, number | undefined], pass: (q: number) => boolean): Goal => {
    const parts = all.map((workload) => [workload, ...quotient(workload)] as const)
    const measured = parts.every(([, value, base]) => value !== undefined && base !== undefined)
    const met = all.length === 4 && measured ? parts.every(([, value, base]) => pass(value! / base!)) : undefined
    return { text: `${label}: ${parts.map(([workload, value, base]) => `${workload} ${ratio(value, base)}`).join(', ')}`, met }
  }
  const lines: Goal[] = [
    ...all.map((workload) => atLeast('service', workload === 'create' ? PEERS.sqlite : PEERS.fastify, workload, 1)),
    each('p99 ≤ 1.5× the ceiling\'s in all four workloads', (w) => [get('service', w)?.p99Ms, get('ceiling', w)?.p99Ms], (q) => q <= 1.5),
    each('peak RSS ≤ 1.5× the ceiling\'s in all four workloads', (w) => [get('service', w)?.peakRssBytes, get('ceiling', w)?.peakRssBytes], (q) => q <= 1.5),
    ...all.map((workload) => atLeast(SERVICE_ON_POSTGRES, PEERS.pg, workload, 0.8))
  ]
  return lines.map(verdict).join('\n')
}

function peersSection (input: ReportInput): string {
  const { workloads } = input.options
  const bases = PEER_BASES.filter(([peer]) => workloads.some((workload) => findSummary(input.summaries, 'main', peer, workload) !== undefined))
  const cells = (figure: (summary: Summary) => number): string[][] => bases.map(([peer, base]) => [
    base === 'service' ? peer : `${peer} (÷ the ${base})`,
    ...workloads.map((workload) => {
      const service = findSummary(input.summaries, 'main', base, workload)
      const other = findSummary(input.summaries, 'main', peer, workload)
      return ratio(service === undefined ? undefined : figure(service), other === undefined ? undefined : figure(other))
    })
  ])
  return [
    '## The service against its peers',
    '',
    'The service\'s figure ÷ each peer\'s, measured in the same runs (the pg peer against the service on PostgreSQL). ' +
      'req/s below 1.00×: the peer serves more; CPU/req above 1.00×: the service spends more per request.',
    '',
    '### req/s, service ÷ peer',
    '',
    table(['peer', ...workloads], cells((summary) => summary.reqPerSec)),
    '',
    '### CPU/req, service ÷ peer',
    '',
    table(['peer', ...workloads], cells((summary) => summary.cpuUsPerRequest))
  ].join('\n')
}

function workersSection (input: ReportInput): string {
  const parts = input.options.workloads.map((workload) => {
    const one = findSummary(input.summaries, 'workers', 'WORKERS=1', workload)
    const two = findSummary(input.summaries, 'workers', 'WORKERS=2', workload)
    const rows = [one, two].flatMap((summary) => summary === undefined
      ? []
      : [[summary.target, rate(summary.reqPerSec), ms(summary.p50Ms), ms(summary.p99Ms), mib(summary.peakRssBytes), failures(summary), ratio(summary.reqPerSec, one?.reqPerSec)]])
    return { workload, text: `### ${workload} (workers)\n\n${table(['service', 'req/s', 'p50', 'p99', 'peak RSS', 'non-2xx', 'req/s ÷ WORKERS=1'], rows)}`, gain: ratio(two?.reqPerSec, one?.reqPerSec) }
  })
  return [
    '## All cores: WORKERS=2 against WORKERS=1',
    '',
    'Nothing is pinned in this section, in both legs: WORKERS=2 may use both cores, and the load generator shares them with it. ' +
      'Peak RSS is the sum over the primary and its workers.',
    '',
    `req/s, WORKERS=2 ÷ WORKERS=1: ${parts.map((part) => `${part.workload} ${part.gain}`).join(', ')}.`,
    '',
    parts.map((part) => part.text).join('\n\n')
  ].join('\n')
}

function tracingSection (input: ReportInput): string {
  const parts = input.options.workloads.map((workload) => {
    const off = findSummary(input.summaries, 'tracing', 'traces off', workload)
    const on = findSummary(input.summaries, 'tracing', 'traces on', workload)
    const rows = [off, on].flatMap((summary) => summary === undefined
      ? []
      : [[summary.target, rate(summary.reqPerSec), ms(summary.p50Ms), ms(summary.p99Ms), mib(summary.peakRssBytes), us(summary.cpuUsPerRequest), failures(summary), ratio(summary.reqPerSec, off?.reqPerSec), ratio(summary.cpuUsPerRequest, off?.cpuUsPerRequest)]])
    return { workload, text: `### ${workload} (traces)\n\n${table(['service', 'req/s', 'p50', 'p99', 'peak RSS', 'CPU/req', 'non-2xx', 'req/s ÷ off', 'CPU/req ÷ off'], rows)}`, cost: ratio(on?.cpuUsPerRequest, off?.cpuUsPerRequest) }
  })
  return [
    '## Traces: on against off',
    '',
    'The service as it ships, pinned as in the main comparison; on, every request is sampled and its spans (the request\'s and its store calls\') ' +
      'are exported over OTLP/HTTP to a sink in the bench process, which only reads them.',
    '',
    `CPU per request, on ÷ off: ${parts.map((part) => `${part.workload} ${part.cost}`).join(', ')}.`,
    '',
    parts.map((part) => part.text).join('\n\n')
  ].join('\n')
}

function costsSection (input: ReportInput): string {
  const workloads = COST_WORKLOADS.filter((workload) => input.options.workloads.includes(workload))
  const tables = workloads.map((workload) => {
    const at = (target: string): Summary | undefined => findSummary(input.summaries, 'costs', target, workload)
    const ceiling = at('ceiling')
    const row = (label: string, summary: Summary | undefined, base: Summary | undefined): string[][] => summary === undefined
      ? []
      : [[label, rate(summary.reqPerSec), us(summary.cpuUsPerRequest), failures(summary), ratio(summary.reqPerSec, base?.reqPerSec), ratio(summary.cpuUsPerRequest, base?.cpuUsPerRequest)]]
    const rows = [
      ...row('ceiling', ceiling, ceiling),
      ...row('none: the ceiling\'s work', at('none'), ceiling),
      ...FEATURE_STEPS.flatMap((step) => row(`+ ${step}`, at(step), ceiling)),
      // The service as measured in the main comparison, against the ceiling of those runs.
      ...row('the service (main comparison)', findSummary(input.summaries, 'main', 'service', workload), findSummary(input.summaries, 'main', 'ceiling', workload))
    ]
    return `### ${workload} (feature costs): ${WORKLOAD_REQUESTS[workload]}\n\n${table(['step', 'req/s', 'CPU/req', 'non-2xx', 'req/s ÷ ceiling', 'CPU/req ÷ ceiling'], rows)}`
  })
  return [
    '## What the features cost',
    '',
    'bench/feature-costs.ts: the ceiling\'s get and create on bare `node:http`, run with the service\'s node flags from the TypeScript sources, ' +
      'with the service\'s own modules added one step at a time, each step keeping those above it. The last step does what the service does ' +
      'for these requests, without Fastify, schema validation and the plugins that answer other requests. ' +
      `Runs interleaved with the ceiling's, pinned as in the main comparison; medians of ${input.options.runs} run(s).`,
    '',
    '- none: the ceiling\'s work in this server (the difference from the ceiling is the node flags and the loader).',
    ...FEATURE_STEPS.map((step) => `- ${step}: ${FEATURE_TEXTS[step]}.`),
    '',
    tables.join('\n\n')
  ].join('\n')
}

/** Where the PostgreSQL server is, without its credentials: `127.0.0.1:5432/test`. */
function serverOf (url: string): string {
  const { host, pathname } = new URL(url)
  return `${host}${pathname}`
}

function deploymentsSection (input: ReportInput): string {
  const { options, pinned } = input
  const postgres = options.postgres
  const shapes = postgres === undefined ? DEPLOYMENT_SHAPES.slice(0, 2) : DEPLOYMENT_SHAPES
  const at = (shape: string, workload: Workload): Summary | undefined => findSummary(input.summaries, 'deployments', shape, workload)
  const cells = (figure: (summary: Summary) => number, show: (value: number) => string): string[][] => shapes.map((shape) => [
    shape,
    ...options.workloads.map((workload) => {
      const summary = at(shape, workload)
      const base = at(DEPLOYMENT_SHAPES[0], workload)
      return summary === undefined ? '–' : `${show(figure(summary))} (${ratio(figure(summary), base === undefined ? undefined : figure(base))})`
    })
  ])
  const failed = shapes.flatMap((shape) => options.workloads.flatMap((workload) => {
    const summary = at(shape, workload)
    return summary === undefined || (summary.non2xx === 0 && summary.socketErrors === 0) ? [] : [`${shape} on ${workload}: ${failures(summary)}`]
  }))
  const single = pinned ? 'pinned to core 0, the load generator to core 1 (as in the main comparison)' : 'not pinned (no `taskset` or a single core)'
  const local = postgres !== undefined && /^(127\.|localhost|\[::1\])/.test(new URL(postgres).host)
  return [
    '## Deployment shapes',
    '',
    `The shapes of docs/deployment.md, each workload ${options.runs} time(s) per shape, shapes interleaved within each run; medians. ` +
      `${options.connections} connections in all, the same ${options.animals.toLocaleString('en-US')} animals at the start of every run.`,
    '',
    `- ${DEPLOYMENT_SHAPES[0]}: the service as in the main comparison, ${single}.`,
    `- ${DEPLOYMENT_SHAPES[1]}: a primary and two workers on one SQLite file; nothing pinned, the workers and the load generator share the cores.`,
    ...(postgres === undefined
      ? ['- **PostgreSQL shapes skipped**: neither `--postgres URL` nor `TEST_DATABASE_URL` was set.']
      : [
          `- ${DEPLOYMENT_SHAPES[2]}: one service (\`WORKERS=1\`) on PostgreSQL at ${serverOf(postgres)}, ${single}.`,
          `- ${DEPLOYMENT_SHAPES[3]}: two services (\`WORKERS=1\` each) on two ports, on the same schema; the connections split between them, ` +
            `one ${input.tool.name} each, started together; req/s summed, p99 the worse of the two. Nothing pinned.`,
          '- Each PostgreSQL run has a schema of its own (`CREATE SCHEMA bench_<random>`, `options=-c search_path=<schema>` in the URL), ' +
            'migrated and filled by `petstore import`, dropped after the run: creates never pile up from one run to the next.',
          local
            ? '- PostgreSQL runs on this machine, unpinned, on the same cores as the services and the load generator: its work is counted against them.'
            : '- PostgreSQL runs on another host: its cores are not this machine\'s.'
        ]),
    '',
    `### req/s (÷ ${DEPLOYMENT_SHAPES[0]})`,
    '',
    table(['shape', ...options.workloads], cells((summary) => summary.reqPerSec, rate)),
    '',
    `### p99 (÷ ${DEPLOYMENT_SHAPES[0]})`,
    '',
    table(['shape', ...options.workloads], cells((summary) => summary.p99Ms, ms)),
    '',
    failed.length === 0 ? 'No request failed.' : `Failed requests (non-2xx, socket errors): ${failed.join('; ')}.`
  ].join('\n')
}

function scaleSection (input: ReportInput): string {
  const sizes = input.scaleSizes
  const smallest = sizes[0]!.animals
  const largest = sizes[sizes.length - 1]!.animals
  const loaded = table(['animals', 'filled by', 'in', 'database file'], sizes.map((size) => [
    size.animals.toLocaleString('en-US'), `\`petstore ${size.loadedBy}\``, `${size.loadSeconds.toFixed(1)} s`, mib(size.databaseBytes)
  ]))
  const lines: Goal[] = []
  const tables = SCALE_WORKLOADS.map((workload) => {
    const at = (animals: number): Summary | undefined => findSummary(input.summaries, 'scale', String(animals), workload)
    const base = at(smallest)
    const rows = sizes.flatMap(({ animals }) => {
      const summary = at(animals)
      return summary === undefined
        ? []
        : [[animals.toLocaleString('en-US'), rate(summary.reqPerSec), ms(summary.p50Ms), ms(summary.p99Ms), failures(summary), ratio(summary.p50Ms, base?.p50Ms), ratio(summary.p99Ms, base?.p99Ms)]]
    })
    const top = at(largest)
    if (top !== undefined && base !== undefined) {
      lines.push({
        text: `${workload}: p50 ${ratio(top.p50Ms, base.p50Ms)}, p99 ${ratio(top.p99Ms, base.p99Ms)}`,
        met: top.p50Ms <= 1.2 * base.p50Ms && top.p99Ms <= 1.2 * base.p99Ms
      })
    }
    return `### ${workload} (scale): ${SCALE_REQUESTS[workload]}\n\n${table(['animals', 'req/s', 'p50', 'p99', 'non-2xx', 'p50 ÷ smallest', 'p99 ÷ smallest'], rows)}`
  })
  return [
    '## Scale curve',
    '',
    'The service alone, one database per size used as it is (these workloads only read), sizes interleaved within each run.',
    '',
    loaded,
    '',
    `Latency at ${largest.toLocaleString('en-US')} ÷ at ${smallest.toLocaleString('en-US')} within 1.2× (the scale target):`,
    '',
    lines.map(verdict).join('\n'),
    '',
    tables.join('\n\n')
  ].join('\n')
}

/** How quiet the machine was before the runs: other work on it is what made runs disagree. */
function quietLine (quiet: Quiet[]): string {
  const busiest = Math.max(0, ...quiet.map((run) => run.busyShare))
  const waited = quiet.reduce((sum, run) => sum + run.waitedSeconds, 0)
  const busy = quiet.filter((run) => run.busyShare >= QUIET_SHARE).length
  return `- Before each run the bench waits for a second in which the machine is busy under ${QUIET_SHARE * 100} % of a core (at most a minute): ` +
    `the busiest such second before the ${quiet.length} runs was ${Math.round(busiest * 100)} % of a core, the waits came to ${Math.round(waited)} s` +
    (busy === 0 ? '.' : `, and **${busy} run(s) started on a busy machine**: their figures are suspect.`)
}

/**
 * The whole report.
 * @example process.stdout.write(renderReport(input))
 */
export function renderReport (input: ReportInput): string {
  const { facts } = input
  const sections = [
    `# Benchmark: ${facts.date.slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `- Machine: ${facts.cpuModel}, ${facts.cores} cores, ${facts.memoryGiB} GiB, ${facts.kernel}; load average ${facts.loadAverage.toFixed(2)} at the start (the machine is shared).`,
    `- Node.js ${facts.node}. The bench took ${Math.round(input.elapsedSeconds)} s.`,
    quietLine(input.quiet),
    `- Command: \`${input.command}\``,
    settings(input),
    '',
    '## Ratios to the ceiling',
    '',
    'Throughput ÷ the ceiling says how much of what Node can do here the service keeps; p99 and RSS ÷ the ceiling, what it costs. ' +
      'Only ratios compare across runs: the machine is shared and its absolute figures move.' +
      (input.baseline === undefined ? '' : ' The ÷ baseline columns set each row against the baseline build measured in the same runs: the service\'s row says what the change since it did.'),
    '',
    input.options.workloads.map((workload) => workloadSection(input, workload)).join('\n\n'),
    '',
    '## Targets',
    '',
    goals(input)
  ]
  if (input.options.peers) sections.push('', peersSection(input))
  if (input.options.costs) sections.push('', costsSection(input))
  if (input.options.workers) sections.push('', workersSection(input))
  if (input.options.tracing) sections.push('', tracingSection(input))
  if (input.options.deployments) sections.push('', deploymentsSection(input))
  if (input.scaleSizes.length > 0) sections.push('', scaleSection(input))
  if (input.problems.length > 0) sections.push('', '## Problems', '', input.problems.map((problem) => `- ${problem}`).join('\n'))
  return `${sections.join('\n')}\n`
}
