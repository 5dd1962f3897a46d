/**
 * `npm run bench -- --overload`: the service and the Fastify peer (with @fastify/under-pressure) on
 * core 0, each under a CPU quota (cgroup v1), the open-loop generator (open-loop.ts) on core 1. In
 * each regime (quota periods of 10 ms and 100 ms): capacity in a closed loop (autocannon), then
 * arrivals at 0.8x, 1x, 2x and 3x of it, on list and create, SQLite and PostgreSQL. A markdown
 * report of goodput, refusals, timeouts and the CPU behind them.
 */
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { commitOf } from './baseline.js'
import { count, positive, readFlags } from './flags.js'
import { BUILT, REQUESTS, noOutcome, pinned, runLoad, workloadSpec, type LoadJob, type LoadOutcome } from './load.js'
import { heading, median, ms, prose, rate, spread, table, times } from './report.js'
import { API_KEY, createSchema, placement, prepare, seed, startArguments } from './targets.js'
import { freePort, startProcess, startService, type Target } from './targets.js'

/** The peer's @fastify/under-pressure, tuned once; `interval` mode, else its utilization averages since its start. */
const UNDER_PRESSURE = {
  maxEventLoopDelay: 200, maxEventLoopUtilization: 0.99, eventLoopUtilizationMode: 'interval', sampleInterval: 100
}

/**
 * The quota's default share of one core: at 3x the service's list capacity in it (about 3,000
 * arrivals a second, most of them timing out) the generator still sends on time; at a third of a
 * core (7,500 a second) it does not, each timeout costing it a socket reset and a new connection.
 */
const SHARE = 0.15
/** The most sockets the generator keeps open at once, and the clients of the closed loop that measures capacity. */
const [SOCKETS, CONNECTIONS] = [10_000, 50]
const DEADLINE_MS = 1000
const LATE_MS = 5
const LATE_SHARE = 0.01
const WARM_UP_SECONDS = 3
const ANIMALS = 10_000
const CPU_CGROUPS = '/sys/fs/cgroup/cpu'
const HAPROXY = '/usr/sbin/haproxy'
const DATABASES = ['sqlite', 'postgres'] as const
const WORKLOADS = ['list', 'create'] as const
const SUBJECTS = ['service', 'haproxy', 'peer'] as const
const NAMES: Record<string, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL', haproxy: 'service behind HAProxy' }
type Workload = typeof WORKLOADS[number]

export type OverloadOptions = ReturnType<typeof parseOverloadOptions>

export function parseOverloadOptions (argv: string[]) {
  const names = ['database', 'workload', 'subject', 'regime', 'levels', 'runs', 'duration', 'postgres']
  const flags = readFlags(argv, names, [], '## The overload run')
  const { postgres } = flags
  const databases = flags.list('database', DATABASES).filter((name) => name === 'sqlite' || postgres !== undefined)
  if (databases.length === 0) throw new Error('--database: postgres needs --postgres URL or TEST_DATABASE_URL')
  return {
    databases,
    workloads: flags.list('workload', WORKLOADS),
    subjects: flags.list('subject', SUBJECTS),
    regimes: flags.list('regime', ['10', '100']).map(Number),
    levels: flags.numbers('levels', [0.8, 1, 2, 3], positive, 'positive multiples of the capacity, such as 0.8,1,2,3'),
    runs: flags.number('runs', 1, count, 'a positive integer'),
    duration: flags.number('duration', 10, positive, 'a positive number of seconds'),
    postgres
  }
}

interface Quota { periodMs: (ms?: number) => void, remove: () => void }

/** A cgroup v1 CPU quota of `share` of one core holding `pids`; `periodMs(undefined)` lifts it. */
function cpuQuota (name: string, share: number, pids: string[]): Quota {
  const dir = join(CPU_CGROUPS, name)
  mkdirSync(dir)
  const write = (file: string, value: string | number): void => { writeFileSync(join(dir, file), String(value)) }
  // The most weight against the other processes on its core: the quota, not a neighbour, is what holds it.
  write('cpu.shares', 262144)
  for (const pid of pids) write('cgroup.procs', pid)
  return {
    periodMs: (ms) => {
      write('cpu.cfs_quota_us', -1)
      if (ms === undefined) return
      write('cpu.cfs_period_us', ms * 1000)
      write('cpu.cfs_quota_us', Math.round(share * ms * 1000))
    },
    // Its processes back to the root group (they have stopped by then: run.ts stops every process first).
    remove: () => {
      for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
        try { writeFileSync(join(CPU_CGROUPS, 'cgroup.procs'), pid) } catch {}
      }
      rmdirSync(dir)
    }
  }
}

/** The open-loop generator: one process of open-loop.js (its code compiled, its heap grown), one job at a time. */
function startGenerator (cpus: string | undefined): { run: (job: LoadJob) => Promise<LoadOutcome>, stop: () => void } {
  const [command, args] = pinned(cpus, [`${BUILT}open-loop.js`])
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return {
    run: async (job) => await new Promise((resolve, reject) => {
      const exited = (): void => { reject(new Error('the load generator exited')) }
      child.once('exit', exited)
      child.once('message', (outcome) => { child.off('exit', exited); resolve(outcome as LoadOutcome) })
      child.send(job)
    }),
    stop: () => { child.kill() }
  }
}

/**
 * What the open loop loads (`target`), the process in the quota whose CPU counts there (`service`),
 * the one the closed loop sizes, HAProxy beside them (on the generator's core, no quota), their quota.
 */
interface Subject {
  name: string, target: Target, service: Target, sizer: Target, balancer?: Target, quota: (ms?: number) => void
}

/** One measured run: capacity (closed loop), a level (open loop), or a run of the refusing service. */
interface Run {
  run: number
  database: string
  workload: Workload
  regime: number
  subject: string
  level: 'capacity' | 'refusing' | number
  /** The capacity the level is a multiple of, and the arrivals a second. */
  capacity: number
  rate: number
  seconds: number
  outcome: LoadOutcome
  /** CPU seconds over the run: of the subject, of HAProxy; per second of the run, that of the generator. */
  cpu: number
  balancerCpu: number
  generatorCpu: number
}

/**
 * HAProxy from the shipped deploy/haproxy/petstore.cfg, only its bind address, its server's address
 * (one server: the service) and its 503 file's path replaced; pinned to `cpus`, no quota.
 */
async function startHaproxy (root: string, work: string, service: Target, cpus: string | undefined): Promise<Target> {
  const port = await freePort()
  let servers = 0
  const { host } = new URL(service.origin)
  const config = readFileSync(join(root, 'deploy/haproxy/petstore.cfg'), 'utf8')
    .replace(/^( *bind ).*$/m, `$1127.0.0.1:${port}`)
    .replace(/^( *errorfile 503 ).*$/m, `$1${join(root, 'deploy/haproxy/petstore-503.http')}`)
    .replace(/^( *server \S+ )\S+(.*\n)/gm, (_, head: string, tail: string) => servers++ > 0 ? '' : head + host + tail)
  const file = join(work, `haproxy-${port}.cfg`)
  writeFileSync(file, config)
  const where = { cpus, logFile: `${file}.log`, cwd: work, readyPath: '/readyz' }
  return await startProcess('HAProxy', { ...where, command: HAPROXY, args: ['-db', '-f', file], env: {}, port })
}

/** Waits until the subject has drained what an overloaded run left queued (its CPU idle for a quarter of a second). */
async function waitIdle (target: Target): Promise<void> {
  for (let before = target.cpuSeconds(), deadline = Date.now() + 60_000; Date.now() < deadline;) {
    await sleep(250)
    const now = target.cpuSeconds()
    if (now - before <= 0.02) return
    before = now
  }
}

type Cell = Pick<Run, 'run' | 'database' | 'workload' | 'regime' | 'level' | 'capacity'>

/** Measures runs on subjects: closed loop (autocannon) at `rate` 0, else open loop at `rate`. */
function measurer (generator: ReturnType<typeof startGenerator>, limits: { sockets: number, connections: number },
  loadCpus: string | undefined, say?: (text: string) => void) {
  return async (subject: Subject, cell: Cell, rate: number, seconds: number): Promise<Run> => {
    const [target, counted] = rate === 0 ? [subject.sizer, subject.sizer] : [subject.target, subject.service]
    const spec = workloadSpec(cell.workload, API_KEY, ANIMALS)
    await waitIdle(counted)
    const [cpu, balancer] = [counted.cpuSeconds(), subject.balancer?.cpuSeconds() ?? 0]
    let outcome: LoadOutcome
    let generatorCpu = 0
    if (rate === 0) {
      const { origin } = target
      const result = await runLoad(spec, { origin, connections: limits.connections, seconds, cpus: loadCpus })
      const { requests: arrivals, good, failed: other, p99Ms: goodP99Ms } = result
      outcome = { ...noOutcome(), arrivals, good, other, goodP99Ms }
    } else {
      const { origin } = target
      const { sockets } = limits
      outcome = await generator.run({ origin, spec, rate, sockets, seconds, deadlineMs: DEADLINE_MS, lateMs: LATE_MS })
      generatorCpu = outcome.cpuSeconds / seconds
    }
    const arrivals = rate === 0 ? outcome.arrivals / seconds : rate
    const [used, balancerCpu] = [counted.cpuSeconds() - cpu, (subject.balancer?.cpuSeconds() ?? 0) - balancer]
    const run = { ...cell, subject: subject.name, rate: arrivals, seconds, outcome, cpu: used, balancerCpu }
    const level = typeof cell.level === 'number' ? `${cell.level}x` : cell.level
    say?.(`  ${subject.name}, ${cell.workload}, ${regimeOf(cell.regime)}, ${level}: ` +
      `${Math.round(outcome.good / seconds)} good/s, ${outcome.refused} refused, ${outcome.timeouts} timeouts, ` +
      `${outcome.late} late`)
    return { ...run, generatorCpu }
  }
}

/**
 * The overload run's smoke, in `npm run bench -- --smoke`: on a started service, no quota,
 * capacity for a quarter of a second and one level (0.8x) for half a second; its table.
 */
export async function overloadSmoke (target: Target, loadCpus: string | undefined, animals: number): Promise<string> {
  const generator = startGenerator(loadCpus)
  try {
    const measure = measurer(generator, { sockets: 100, connections: 10 }, loadCpus)
    const subject = { name: 'service', target, service: target, sizer: target, quota: () => {} }
    const cell = { run: 1, database: 'sqlite', workload: 'list', regime: 0 } as const
    const capacity = await measure(subject, { ...cell, level: 'capacity', capacity: 0 }, 0, 0.25)
    const perSecond = capacity.outcome.good / 0.25
    const level = await measure(subject, { ...cell, level: 0.8, capacity: perSecond }, Math.round(0.8 * perSecond), 0.5)
    return `\n## Overload smoke: ${renderTables([capacity, level]).slice('## '.length)}`
  } finally {
    generator.stop()
  }
}

/** The whole overload run; `cleanups` gets what must go however it ends (quotas, schemas, the generator). */
export async function overload (options: OverloadOptions, work: string, root: string, say: (text: string) => void,
  cleanups: Array<() => Promise<void>>): Promise<{ report: string, code: number }> {
  const began = performance.now()
  const { serverCpus, loadCpus } = placement()
  const { seeded, animalsFile } = await prepare(root, work, ANIMALS, say)
  const generator = startGenerator(loadCpus)
  cleanups.push(async () => { generator.stop() })
  const measure = measurer(generator, { sockets: SOCKETS, connections: CONNECTIONS }, loadCpus, say)

  const analyzes: Array<() => Promise<void>> = []
  /** The service (seeded) or the peer (filled from the export at its start) on `database`, in a quota of its own. */
  const start = async (name: string, database: string, env: Record<string, string>, peer: boolean) => {
    const slug = `${name}-${database}-${Math.random().toString(36).slice(2, 8)}`.replace(/\W+/g, '-')
    let url = `sqlite:${join(work, `${slug}.db`)}`
    if (database === 'postgres') {
      const schema = await createSchema(options.postgres!)
      cleanups.push(schema.drop)
      analyzes.push(schema.analyze)
      url = schema.url
      if (!peer) await seed(root, url, ANIMALS)
    } else if (!peer) {
      copyFileSync(seeded, url.slice('sqlite:'.length))
    }
    const where = { cpus: serverCpus, logFile: join(work, `${slug}.log`) }
    const peerEnv = { DATABASE_URL: url, BENCH_ANIMALS_FILE: animalsFile, BENCH_KEY: API_KEY, ...env }
    const args = [`${BUILT}peers/fastify.js`]
    const target = peer
      ? await startProcess(name, { ...where, args, env: peerEnv, cwd: root, readyPath: '/readyz' })
      : await startService(name, root, url, where, { RATE_LIMIT: '0', ...env })
    const quota = cpuQuota(`petstore-overload-${process.pid}-${slug}`, SHARE, target.pids())
    cleanups.push(async () => { quota.remove() })
    return { target, service: target, sizer: target, quota: quota.periodMs }
  }

  const runs: Run[] = []
  for (let run = 1; run <= options.runs; run++) {
    for (const database of options.databases) {
      say(`run ${run} of ${options.runs}, ${database}: starting ${options.subjects.join(' and ')}`)
      const subjects = await Promise.all(options.subjects.map(async (name): Promise<Subject> => {
        if (name === 'service') return { name, ...await start(name, database, {}, false) }
        // Capacity measured on the service alone, the open loop sent through HAProxy.
        if (name === 'haproxy') {
          const alone = await start(name, database, {}, false)
          const balancer = await startHaproxy(root, work, alone.target, loadCpus)
          return { name: NAMES.haproxy!, ...alone, target: balancer, balancer }
        }
        // Under its quota, under-pressure refuses much of a closed loop: the peer's capacity is its twin's, without it.
        const pressure = { BENCH_UNDER_PRESSURE: JSON.stringify(UNDER_PRESSURE) }
        const subject = await start(name, database, pressure, true)
        const twin = await start('twin', database, {}, true)
        const quota = (ms?: number): void => { subject.quota(ms); twin.quota(ms) }
        return { name, target: subject.target, service: subject.target, sizer: twin.target, quota }
      }))
      // r's service refuses every request behind a key (its admission stage at MAX_QUEUE_DELAY=0).
      const refusing = options.subjects.includes('service')
        ? { name: 'service refusing whole', ...await start('refusing', database, { MAX_QUEUE_DELAY: '0' }, false) }
        : undefined
      // Every table the planner reads has fresh statistics before the first request.
      for (const analyze of analyzes.splice(0)) await analyze()
      for (const workload of options.workloads) {
        for (const subject of subjects) {
          const refuser = subject.name === 'service' ? refusing : undefined
          const each = [subject, ...(refuser === undefined ? [] : [refuser])]
          // Warm, as a server up for a while is: compiled by the JIT without a quota (its threads would spend it).
          say(`${subject.name}, ${workload}: warm-up, no quota`)
          const cell = { run, database, workload }
          for (const one of each) {
            one.quota(undefined)
            await measure(one, { ...cell, regime: 0, level: 'capacity', capacity: 0 }, 0, WARM_UP_SECONDS)
          }
          for (const regime of options.regimes) {
            for (const one of each) one.quota(regime)
            const at = await measure(subject, { ...cell, regime, level: 'capacity', capacity: 0 }, 0, options.duration)
            runs.push(at)
            const capacity = at.outcome.good / options.duration
            const level = async (one: Subject, name: Run['level'], times: number, seconds: number): Promise<Run> =>
              await measure(one, { ...cell, regime, capacity, level: name }, Math.round(times * capacity), seconds)
            // Busy again before it is measured, as a server up for a while is: idle meanwhile, its heap shrank back.
            await level(subject, 'capacity', 0.5, WARM_UP_SECONDS)
            for (const times of options.levels) runs.push(await level(subject, times, times, options.duration))
            // At 3x, where the share r of a refusal's cost decides the goodput.
            if (refuser === undefined) continue
            await level(refuser, 'capacity', 3, WARM_UP_SECONDS)
            runs.push(await level(refuser, 'refusing', 3, options.duration))
          }
        }
      }
      const targets = [...subjects, refusing].flatMap((one) => one === undefined ? [] : [one.target, one.sizer])
      await Promise.all([...new Set(targets)].map(async (target) => { await target.stop() }))
    }
  }
  const service = `node ${startArguments(root).join(' ')}`
  const report = renderOverload(options, runs, commitOf(root), service, (performance.now() - began) / 1000)
  const failed = runs.filter((entry) => entry.outcome.other + entry.outcome.errors > 0 && entry.level !== 'refusing')
  for (const { subject, outcome, workload, database, regime, level } of failed) {
    const where = `${workload}, ${database}, ${regimeOf(regime)}, ${level}`
    say(`${subject} failed ${outcome.other + outcome.errors} requests on ${where}`)
  }
  return { report, code: failed.length === 0 ? 0 : 1 }
}

const regimeOf = (regime: number): string => regime === 0 ? 'no quota' : `${regime} ms periods`
const invalid = ({ level, outcome: o }: Run): boolean => level !== 'capacity' && o.late > LATE_SHARE * o.arrivals

/** A run's figures, as the report gives them: per second, in % of the arrivals or of a core, ÷ the capacity. */
function figures (entry: Run) {
  const { outcome: o, seconds } = entry
  const share = (part: number): number => o.arrivals === 0 ? NaN : 100 * part / o.arrivals
  return {
    arrivals: entry.rate,
    goodput: o.good / seconds,
    cap: o.good / seconds / (entry.capacity || entry.rate),
    answered: share(o.good + o.refused),
    refusals: o.refused / seconds,
    refusedP99: o.refusedP99Ms ?? NaN,
    servedP99: o.goodP99Ms ?? NaN,
    timeouts: share(o.timeouts),
    failed: o.other + o.errors,
    cpu: 100 * entry.cpu / seconds,
    balancer: 100 * entry.balancerCpu / seconds,
    generator: 100 * entry.generatorCpu,
    late: share(o.late),
    waited: o.waitedMs
  }
}

type Column = [string, keyof ReturnType<typeof figures>, (values: number[]) => string]
type Format = (value: number) => string
const mid = (format: Format) => (values: number[]) => values.length === 0 ? '–' : format(median(values))
const range = (format: Format) => (values: number[]) => values.length === 0 ? '–' : spread(values, format)
const pc = (value: number): string => `${value.toFixed(1)} %`
const cores = (value: number): string => `${Math.round(value)} %`
const LEVEL_COLUMNS: Column[] = [['arrivals/s', 'arrivals', mid(rate)], ['goodput/s', 'goodput', mid(rate)],
  ['÷ cap', 'cap', range(times)], ['answered', 'answered', range(pc)], ['refusals/s', 'refusals', mid(rate)],
  ['refusals p99', 'refusedP99', range(ms)], ['served p99', 'servedP99', mid(ms)], ['timeouts', 'timeouts', mid(pc)],
  ['failed', 'failed', (values) => String(values.reduce((a, b) => a + b, 0))], ['CPU', 'cpu', mid(cores)],
  ['CPU HAProxy', 'balancer', mid(cores)], ['CPU generator', 'generator', mid(cores)], ['late', 'late', range(pc)],
  ['generator waited', 'waited', mid((v) => `${Math.round(v)} ms`)]]

/** The same measurement in each run of the whole, by `key`. */
function groups (runs: Run[], key: (entry: Run) => string): Run[][] {
  const all = new Map<string, Run[]>()
  for (const entry of runs) all.set(key(entry), [...all.get(key(entry)) ?? [], entry])
  return [...all.values()]
}

/** A row: its first cells, then each column over the runs, marked where a run was invalid. */
function row (same: Run[], first: string[], columns: Column[]): string[] {
  const invalids = same.filter(invalid).length
  const mark = invalids === 0 ? '' : ` **invalid** (${invalids} of ${same.length})`
  const cells = columns.map(([, key, format]) => format(same.map((one) => figures(one)[key]).filter(Number.isFinite)))
  return [...first.slice(0, -1), first.at(-1)! + mark, ...cells]
}

/** A table per workload, database and regime: each subject's capacity, then each level. */
function renderTables (runs: Run[]): string {
  const shown = runs.filter((entry) => entry.level !== 'refusing')
  return groups(shown, (entry) => `${entry.workload}|${entry.database}|${entry.regime}`).map((cell) => {
    const { workload, database, regime } = cell[0]!
    const rows = groups(cell, (entry) => `${entry.subject}|${entry.level}`).map((same) => {
      const { subject, level } = same[0]!
      return row(same, [subject, level === 'capacity' ? 'capacity (closed loop)' : `${level}×`], LEVEL_COLUMNS)
    })
    const header = ['subject', 'level', ...LEVEL_COLUMNS.map(([name]) => name)]
    const title = `${workload} on ${NAMES[database]}, ${regimeOf(regime)}: ${REQUESTS[workload]}`
    return `## ${title}\n\n${table(header, rows, 2)}`
  }).join('\n\n') + '\n'
}

/** r: the service's CPU per refusal in a run it refuses whole ÷ its CPU per request at capacity (same cell and run). */
function r (runs: Run[], refusing: Run): number[] {
  const same = (entry: Run): boolean => entry.run === refusing.run && entry.workload === refusing.workload &&
    entry.database === refusing.database && entry.regime === refusing.regime
  const capacity = runs.find((entry) => entry.level === 'capacity' && entry.subject === 'service' && same(entry))
  const { refused, good, other } = refusing.outcome
  if (capacity === undefined || refused === 0 || good + other > 0) return []
  return [refusing.cpu / refused / (capacity.cpu / capacity.outcome.good)]
}

function renderOverload (options: OverloadOptions, runs: Run[], commit: string, service: string, seconds: number) {
  const { serverCpus, loadCpus } = placement()
  const lines = [
    heading('Overload', commit, seconds),
    prose`- Subjects ${serverCpus === undefined ? 'unpinned' : `on core ${serverCpus}`}, each in a CPU quota of ${SHARE}
      of a core; the generator ${loadCpus === undefined ? 'unpinned' : `on core ${loadCpus}`}; PostgreSQL unpinned.
      The service: \`${service}\` on ${rate(ANIMALS)} animals, \`RATE_LIMIT=0\`. ${options.runs} run(s), each
      subject started afresh for each: medians over the runs, their range in brackets. Capacity: autocannon,
      ${CONNECTIONS} connections, ${options.duration} s; each level: arrivals at a fixed rate for ${options.duration} s,
      a ${DEADLINE_MS} ms deadline; over ${100 * LATE_SHARE} % of sends more than ${LATE_MS} ms late, a run is
      **invalid**. What each figure is: bench/README.md.`,
    '',
    renderTables(runs).trimEnd()
  ]
  const cellOf = (o: Run): string => `${o.workload}|${o.database}|${o.regime}`
  const refusing = groups(runs.filter((one) => one.level === 'refusing'), cellOf)
  if (refusing.length > 0) {
    const rows = refusing.map((same) => {
      const { workload, database, regime } = same[0]!
      return [`${workload}, ${NAMES[database]}, ${regimeOf(regime)}`, range(pc)(same.map((o) => figures(o).timeouts)),
        range((v) => v.toFixed(2))(same.flatMap((one) => r(runs, one)))]
    })
    lines.push('', '## r', '', prose`The service's CPU per refusal, in a run at 3× its capacity's rate where it refuses
      every request it answers (\`MAX_QUEUE_DELAY=0\`), over its CPU per request at capacity; timeouts there mean it
      could not refuse every arrival in time, and their work counts in the CPU per refusal.`, '',
    table(['workload, database, regime', 'timeouts refusing', 'r'], rows))
  }
  return `${lines.join('\n')}\n`
}
