/** `npm run bench -- --overload` (bench/README.md): each subject in a CPU quota, its capacity, then arrivals beyond. */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { readFlags, say } from './flags.js'
import { request, workloadSpec, type Workload } from './load.js'
import type { LoadJob, LoadOutcome } from './open-loop.js'
import { heading, ms, rate, spread, table, times, us } from './report.js'
import { BUILT, LOAD_CPUS, ROOT, atEnd, freePort, pinned } from './targets.js'
import { prepare, runLoad, startArguments, startProcess, type Target } from './targets.js'

// The quota's share of a core: at 3x the service's list capacity in it the generator still sends on time, at 1/3 not.
const SHARE = 0.15
/** A run with more than LATE_SHARE of its sends late (open-loop.ts) is invalid. */
const LATE_SHARE = 0.01
const WARM_UP_SECONDS = 3
const ANIMALS = 10_000

export function parseOverloadOptions (argv: string[]) {
  const flags = readFlags(argv, ['database', 'workload', 'subject', 'regime', 'levels', 'runs', 'duration', 'postgres'])
  return {
    // PostgreSQL needs a server: --postgres URL or TEST_DATABASE_URL.
    databases: flags.list('database', flags.postgres === undefined ? ['sqlite'] : ['sqlite', 'postgres']),
    workloads: flags.list('workload', ['list', 'create']),
    subjects: flags.list('subject', ['service', 'haproxy']),
    regimes: flags.list('regime', ['10', '100']).map(Number),
    levels: flags.numbers('levels', [0.8, 1, 2, 3]),
    runs: flags.number('runs', 1, true),
    duration: flags.number('duration', 10),
    postgres: flags.postgres
  }
}

/** A cgroup v1 quota of SHARE of a core holding `target`: `(ms)` sets its period, `()` lifts it. */
function cpuQuota (target: Target): (periodMs?: number) => void {
  const dir = `/sys/fs/cgroup/cpu/petstore-overload-${target.pid}`
  mkdirSync(dir)
  // Empty by then: every process stops before the cleanups.
  atEnd(async () => { rmdirSync(dir) })
  const write = (file: string, value: string | number): void => { writeFileSync(join(dir, file), String(value)) }
  // The most weight against the other processes on its core: the quota, not a neighbour, is what holds it.
  write('cpu.shares', 262144)
  write('cgroup.procs', target.pid)
  return (periodMs) => {
    write('cpu.cfs_quota_us', -1)
    if (periodMs === undefined) return
    write('cpu.cfs_period_us', periodMs * 1000)
    write('cpu.cfs_quota_us', Math.round(SHARE * periodMs * 1000))
  }
}

/** The open-loop generator: one process for the whole bench (compiled, its heap grown), a job at a time. */
let generator: ((job: LoadJob) => Promise<LoadOutcome>) | undefined
function startGenerator (): (job: LoadJob) => Promise<LoadOutcome> {
  const [command, args] = pinned(LOAD_CPUS, [`${BUILT}open-loop.js`])
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  atEnd(async () => { child.kill() })
  const exited = once(child, 'exit').then(() => { throw new Error('the load generator exited') })
  // Its end fails the job it was given, if any.
  exited.catch(() => {})
  return async (job) => {
    child.send(job)
    return (await Promise.race([once(child, 'message'), exited]))[0] as LoadOutcome
  }
}

/** What the open loop loads (HAProxy, for the service behind it), what the closed loop sizes, their quota. */
interface Subject { name: string, target: Target, sizer: Target, quota: (periodMs?: number) => void, refuser?: Subject }

/** Where a run is measured: its table (workload, database, regime), and the capacity its level multiplies. */
interface Cell { workload: Workload, database: string, regime: number, capacity: number }

/** A run at `level` times the capacity (0: the capacity); `cpu`: of the process the load reached, `serviceCpu`: the service's; `r`: see README. */
type Run = Cell & { subject: string, level: number, seconds: number, outcome: LoadOutcome, cpu: number, serviceCpu: number, r?: number }

/** HAProxy from the shipped deploy/haproxy/petstore.cfg, only its bind, its servers (one) and its 503 file replaced. */
async function startHaproxy (root: string, work: string, service: Target, cpus: string | undefined): Promise<Target> {
  const port = await freePort()
  const { host } = new URL(service.origin)
  const recipe = readFileSync(join(root, 'deploy/haproxy/petstore.cfg'), 'utf8')
  // Each backend's first server is the service; the others go.
  const first = /^ *server (\S+)/m.exec(recipe)![1]
  const config = recipe
    .replace(/^( *bind ).*$/m, `$1127.0.0.1:${port}`)
    .replace(/^( *errorfile 503 ).*$/m, `$1${join(root, 'deploy/haproxy/petstore-503.http')}`)
    .replace(/^( *server (\S+) )\S+(.*\n)/gm, (_, head: string, name: string, tail: string) =>
      name === first ? head + host + tail : '')
  const file = join(work, `haproxy-${port}.cfg`)
  writeFileSync(file, config)
  const where = { cpus, logFile: `${file}.log`, cwd: work, readyPath: '/readyz', env: {}, port }
  return await startProcess('HAProxy', { ...where, command: '/usr/sbin/haproxy', args: ['-db', '-f', file] })
}

/** A run: at level 0 closed loop (autocannon, 50 connections) on the subject's sizer, else open loop on its target. */
async function measure (subject: Subject, cell: Cell, level: number, seconds: number, connections = 50) {
  // First each process drains what an overloaded run left queued: its CPU idle for a quarter of a second.
  for (const one of new Set([subject.sizer, subject.target])) {
    for (let before = one.cpuSeconds(), deadline = Date.now() + 60_000; Date.now() < deadline;) {
      await sleep(250)
      const now = one.cpuSeconds()
      if (now - before <= 0.02) break
      before = now
    }
  }
  const { origin, cpuSeconds } = level === 0 ? subject.sizer : subject.target
  const spec = workloadSpec(cell.workload, ANIMALS)
  const cpu = cpuSeconds()
  const serviceCpu = subject.sizer.cpuSeconds()
  generator ??= startGenerator()
  const outcome = level === 0
    ? await runLoad({ spec, origin, connections, seconds }).then(({ requests, good, refused, failed }) =>
      ({ arrivals: requests, good, refused, other: failed, timeouts: 0, errors: 0, late: 0, refusedP99Ms: null }))
    : await generator({ origin, spec, rate: Math.round(level * cell.capacity), seconds })
  const run: Run = { ...cell, subject: subject.name, level, seconds, outcome, cpu: cpuSeconds() - cpu, serviceCpu: subject.sizer.cpuSeconds() - serviceCpu }
  say(`  ${subject.name}, ${where(run)}: ${Math.round(outcome.good / seconds)} good/s, ${outcome.late} late`)
  return run
}

/** The overload run's smoke (`npm run bench -- --smoke`): the service, no quota, capacity 0.25 s, 0.8x 0.5 s. */
export async function overloadSmoke (target: Target): Promise<string> {
  const subject = { name: 'service', target, sizer: target, quota: () => {} }
  const cell = { database: 'sqlite', workload: 'list' as const, regime: 0, capacity: 0 }
  // 10 connections, as the race's smoke: on a busy machine 50 would queue, and the admission stage refuse.
  const sized = await measure(subject, cell, 0, 0.25, 10)
  const level = await measure(subject, { ...cell, capacity: sized.outcome.good / 0.25 }, 0.8, 0.5)
  return `\n## Overload smoke: ${renderTables([sized, level]).slice('## '.length)}`
}

/** The whole overload run. */
export async function overload (options: ReturnType<typeof parseOverloadOptions>, work: string) {
  const start = await prepare(work, ANIMALS, options.postgres)
  const started: Target[] = []

  /** The service on `database`, RATE_LIMIT=0 and `env` aside as shipped, in a quota of its own. */
  const service = async (name: string, database: string, env: Record<string, string> = {}): Promise<Subject> => {
    const { target } = await start({ name, sqlite: database === 'sqlite', env: { RATE_LIMIT: '0', ...env } })
    started.push(target)
    return { name, target, sizer: target, quota: cpuQuota(target) }
  }
  const subject = async (name: string, database: string): Promise<Subject> => {
    // With r's twin, refusing every request behind a key (its admission stage at MAX_QUEUE_DELAY=0).
    if (name === 'service') {
      const refuser = await service('service refusing whole', database, { MAX_QUEUE_DELAY: '0' })
      return { ...await service(name, database), refuser }
    }
    // Capacity measured on the service alone, the open loop sent through HAProxy.
    const alone = await service('service behind HAProxy', database)
    const balancer = await startHaproxy(ROOT, work, alone.target, LOAD_CPUS)
    started.push(balancer)
    return { ...alone, target: balancer }
  }

  const runs: Run[] = []
  for (let run = 1; run <= options.runs; run++) {
    for (const database of options.databases) {
      say(`run ${run} of ${options.runs}, ${database}: starting ${options.subjects.join(' and ')}`)
      const subjects = await Promise.all(options.subjects.map(async (name) => await subject(name, database)))
      for (const workload of options.workloads) {
        for (const { refuser, ...one } of subjects) {
          const each = refuser === undefined ? [one] : [one, refuser]
          // Warm, as a server up for a while is: compiled by the JIT without a quota (its threads would spend it).
          for (const warmed of each) {
            warmed.quota()
            await measure(warmed, { workload, database, regime: 0, capacity: 0 }, 0, WARM_UP_SECONDS)
          }
          for (const regime of options.regimes) {
            for (const quoted of each) quoted.quota(regime)
            const sized = await measure(one, { workload, database, regime, capacity: 0 }, 0, options.duration)
            runs.push(sized)
            const cell = { workload, database, regime, capacity: sized.outcome.good / options.duration }
            // Busy again before it is measured, as a server up for a while is: idle meanwhile, its heap shrank back.
            await measure(one, cell, 0.5, WARM_UP_SECONDS)
            for (const level of options.levels) runs.push(await measure(one, cell, level, options.duration))
            // At 3x, where the share r of a refusal's cost decides the goodput; only a run refused whole gives r.
            if (refuser === undefined) continue
            await measure(refuser, cell, 3, WARM_UP_SECONDS)
            const whole = await measure(refuser, cell, 3, options.duration)
            const { refused, good, other } = whole.outcome
            runs.push({ ...whole, r: good + other > 0 ? NaN : whole.cpu / refused / (sized.cpu / sized.outcome.good) })
          }
        }
      }
      await Promise.all(started.splice(0).map(async (target) => { await target.stop() }))
    }
  }
  const report = `${heading('Overload')}\n- Each subject in a CPU quota of ${SHARE} of a core; the service: ` +
    `\`node ${startArguments(ROOT).join(' ')}\`, RATE_LIMIT=0, ${rate(ANIMALS)} animals. Medians of ${options.runs} ` +
    `run(s), the range in brackets; over ${100 * LATE_SHARE} % of sends late: **invalid**. Each figure: ` +
    `bench/README.md.\n\n${renderTables(runs)}`
  // The refusing twin's runs count for r alone.
  const failed = runs.filter((run) => run.r === undefined && failures(run) > 0)
  for (const run of failed) say(`${run.subject} failed ${failures(run)} requests: ${where(run)}`)
  return { report, code: failed.length === 0 ? 0 : 1 }
}

const regimeOf = (regime: number): string => regime === 0 ? 'no quota' : `${regime} ms periods`
const levelOf = (level: number): string => level === 0 ? 'capacity (closed loop)' : `${level}×`
const where = (run: Run): string => `${run.workload}, ${run.database}, ${regimeOf(run.regime)}, ${levelOf(run.level)}`
const pc = (value: number): string => `${value.toFixed(1)} %`
const share = ({ outcome }: Run, part: number): number => 100 * part / outcome.arrivals
const failures = ({ outcome }: Run): number => outcome.other + outcome.errors

/** The report's columns, each a figure of one run (bench/README.md says which) and its format. */
const COLUMNS: Array<[string, (run: Run) => number, (value: number) => string]> = [
  ['goodput/s', ({ outcome, seconds }) => outcome.good / seconds, rate],
  ['÷ cap', ({ outcome, seconds, capacity }) => outcome.good / seconds / capacity, times],
  ['answered', (run) => share(run, run.outcome.good + run.outcome.refused), pc],
  ['refusals/s', ({ outcome, seconds }) => outcome.refused / seconds, rate],
  ['refusals p99', ({ outcome }) => outcome.refusedP99Ms ?? NaN, ms],
  ['timeouts', (run) => share(run, run.outcome.timeouts), pc],
  ['failed', failures, rate],
  ['CPU', ({ cpu, seconds }) => 100 * cpu / seconds, pc],
  ['service CPU', ({ serviceCpu, seconds }) => 100 * serviceCpu / seconds, pc],
  ['CPU/2xx', ({ serviceCpu, outcome }) => serviceCpu / outcome.good * 1e6, us],
  ['r', ({ r }) => r ?? NaN, (value) => value.toFixed(2)]
]

/** Runs grouped by `key`, in the order of their first. */
function groups (runs: Run[], key: (run: Run) => string): Run[][] {
  const all = new Map<string, Run[]>()
  for (const run of runs) all.set(key(run), [...all.get(key(run)) ?? [], run])
  return [...all.values()]
}

/** A table per workload, database and regime, a row per subject and level: medians over the runs, their range. */
function renderTables (runs: Run[]): string {
  return groups(runs, (run) => `${run.workload}|${run.database}|${run.regime}`).map((cell) => {
    const { workload, database, regime } = cell[0]!
    const rows = groups(cell, (run) => `${run.subject}|${run.level}`).map((same) => {
      const invalid = same.filter(({ outcome }) => outcome.late > LATE_SHARE * outcome.arrivals).length
      const mark = invalid === 0 ? '' : ` **invalid** (${invalid} of ${same.length})`
      const cells = COLUMNS.map(([, figure, format]) => spread(same.map(figure).filter(Number.isFinite), format))
      return [same[0]!.subject, levelOf(same[0]!.level) + mark, ...cells]
    })
    const title = `${workload} on ${database}, ${regimeOf(regime)}: ${request(workload)}`
    return `## ${title}\n\n${table(['subject', 'level', ...COLUMNS.map(([name]) => name)], rows, 2)}`
  }).join('\n\n') + '\n'
}
