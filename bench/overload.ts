/**
 * `npm run bench -- --overload`: the service and the Fastify peer (with @fastify/under-pressure)
 * on core 0, each under a CPU quota (cgroup v1), the open-loop generator (open-loop.ts) on core 1.
 * In each regime (quota periods of 10 ms and 100 ms): capacity in a closed loop, then arrivals at
 * 0.8x, 1x, 2x and 3x of it, on list and create, SQLite and PostgreSQL; then 3x for 30 s in
 * 100 ms periods. A markdown report of goodput, refusals, timeouts and the CPU behind them.
 */
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, release } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { git } from './baseline.js'
import { REQUESTS, workloadSpec } from './load.js'
import type { LoadJob, LoadOutcome } from './open-loop.js'
import { ADMISSION_OFF, API_KEY, compileScripts, cpuSecondsOf, createSchema, petstore, startArguments, startProcess, startService, type Target } from './targets.js'

/** The service refusing every request behind a key, for r: its admission stage at MAX_QUEUE_DELAY=0. */
const REFUSING_ENV = { MAX_QUEUE_DELAY: '0' }

/** The peer's @fastify/under-pressure, tuned once; `interval` mode, else its utilization is the average since it started. */
export const UNDER_PRESSURE = { maxEventLoopDelay: 200, maxEventLoopUtilization: 0.99, eventLoopUtilizationMode: 'interval', sampleInterval: 100 }

/**
 * The quota's default share of one core: at 3x the service's list capacity in it (about 3,000
 * arrivals a second, most of them timing out) the generator still sends on time; at a third of a
 * core (7,500 a second) it does not, each timeout costing it a socket reset and a new connection.
 */
const SHARE = 0.15
const DEADLINE_MS = 1000
const LATE_MS = 5
const LATE_SHARE = 0.01
const WARM_UP_SECONDS = 3
const CPU_CGROUPS = '/sys/fs/cgroup/cpu'
const DATABASES = ['sqlite', 'postgres'] as const
const WORKLOADS = ['list', 'create'] as const
const SUBJECTS = ['service', 'peer'] as const
type Workload = typeof WORKLOADS[number]

export const OVERLOAD_USAGE = `Usage: npm run bench -- --overload [options]

  --database D,D     among ${DATABASES.join(', ')} (default both; postgres needs --postgres or TEST_DATABASE_URL)
  --workload W,W     among ${WORKLOADS.join(', ')} (default both)
  --subject S,S      among ${SUBJECTS.join(', ')} (default both)
  --regime MS,MS     quota periods in ms, among 10, 100 (default both)
  --levels X,X       open-loop arrival rates, multiples of the regime's capacity (default 0.8,1,2,3)
  --duration S       seconds of each capacity run and each level (default 10)
  --long S           seconds of the 3x run in 100 ms periods; 0 skips it (default 30)
  --share F          the quota, a share of one core (default ${SHARE})
  --sockets N        most sockets open at once, open loop (default 10000)
  --connections N    clients of the closed loop that measures capacity (default 50)
  --postgres URL     PostgreSQL server (default TEST_DATABASE_URL)
`

export interface OverloadOptions {
  databases: Array<typeof DATABASES[number]>
  workloads: Workload[]
  subjects: Array<typeof SUBJECTS[number]>
  regimes: number[]
  levels: number[]
  duration: number
  long: number
  share: number
  sockets: number
  connections: number
  postgres: string | undefined
}

export function parseOverloadOptions (argv: string[]): OverloadOptions {
  const names = ['database', 'workload', 'subject', 'regime', 'levels', 'duration', 'long', 'share', 'sockets', 'connections', 'postgres']
  const { values } = parseArgs({ args: argv, options: { ...Object.fromEntries(names.map((name) => [name, { type: 'string' }])), help: { type: 'boolean' } } }) as { values: Record<string, string | boolean | undefined> }
  if (values.help === true) { process.stdout.write(OVERLOAD_USAGE); process.exit(0) }
  const list = <T extends string>(name: string, among: readonly T[]): T[] => {
    const picked = typeof values[name] === 'string' ? (values[name] as string).split(',') : [...among]
    const unknown = picked.find((value) => !(among as readonly string[]).includes(value))
    if (unknown !== undefined) throw new Error(`--${name}: ${unknown} is not one of ${among.join(', ')}`)
    return among.filter((value) => picked.includes(value))
  }
  const number = (name: string, fallback: number, check: (value: number) => boolean, what: string): number => {
    const value = Number(values[name] ?? fallback)
    if (!check(value)) throw new Error(`--${name}: must be ${what}`)
    return value
  }
  const postgres = (values.postgres as string | undefined) ?? (process.env.TEST_DATABASE_URL || undefined)
  const databases = list('database', DATABASES).filter((database) => database === 'sqlite' || postgres !== undefined)
  if (databases.length === 0) throw new Error('--database: postgres needs --postgres URL or TEST_DATABASE_URL')
  const levels = typeof values.levels === 'string' ? values.levels.split(',').map(Number) : [0.8, 1, 2, 3]
  if (levels.some((level) => !(level > 0))) throw new Error('--levels: positive multiples of the capacity, such as 0.8,1,2,3')
  return {
    databases,
    workloads: list('workload', WORKLOADS),
    subjects: list('subject', SUBJECTS),
    regimes: list('regime', ['10', '100']).map(Number),
    levels,
    duration: number('duration', 10, (value) => value > 0, 'a positive number of seconds'),
    long: number('long', 30, (value) => value >= 0, 'seconds, 0 or more'),
    share: number('share', SHARE, (value) => value >= 0.05 && value < 1, 'a share of one core from 0.05 to below 1'),
    sockets: number('sockets', 10_000, (value) => Number.isInteger(value) && value > 0, 'a positive integer'),
    connections: number('connections', 50, (value) => Number.isInteger(value) && value > 0, 'a positive integer'),
    postgres
  }
}

interface Quota { periodMs: (ms: number | undefined) => void, stat: () => Record<string, number> }

/** A cgroup v1 CPU quota of `share` of one core holding `pids`, its period set per regime; `remove` gives its processes back to the root group. */
function cpuQuota (name: string, share: number, pids: string[]): Quota & { remove: () => void } {
  const dir = join(CPU_CGROUPS, name)
  mkdirSync(dir)
  const write = (file: string, value: string): void => { writeFileSync(join(dir, file), value) }
  // The most weight against the other processes on its core: the quota, not a neighbour, is what holds it.
  write('cpu.shares', '262144')
  for (const pid of pids) write('cgroup.procs', pid)
  return {
    // undefined: no quota (the warm-up).
    periodMs: (ms) => {
      write('cpu.cfs_quota_us', '-1')
      if (ms !== undefined) { write('cpu.cfs_period_us', String(ms * 1000)); write('cpu.cfs_quota_us', String(Math.round(share * ms * 1000))) }
    },
    stat: () => Object.fromEntries(readFileSync(join(dir, 'cpu.stat'), 'utf8').trim().split('\n').map((line) => line.split(' ')).map(([key, value]) => [key, Number(value)])),
    remove: () => {
      for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) try { writeFileSync(join(CPU_CGROUPS, 'cgroup.procs'), pid) } catch {}
      rmdirSync(dir)
    }
  }
}

/** The load generator: one process of open-loop.ts for a whole run (its code compiled, its heap grown), given one job at a time. */
interface Generator { run: (job: LoadJob) => Promise<LoadOutcome>, stop: () => void }

function startGenerator (scripts: string, cpus: string | undefined): Generator {
  const args = [process.execPath, join(scripts, 'open-loop.js')]
  const [command, ...rest] = cpus === undefined ? args : ['taskset', '-c', cpus, ...args]
  const child = spawn(command!, rest, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
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

interface Subject { name: string, target: Target, quota: Quota | undefined, appName: string | undefined }

/** One measured run: capacity (closed loop), a level (open loop), the long 3x run, or a run of the refusing service. */
interface Run {
  database: string
  workload: Workload
  regime: number
  subject: string
  level: 'capacity' | 'long' | 'refusing' | number
  /** The capacity the level is a multiple of, arrivals a second, the run's nominal and measured seconds. */
  capacity: number
  rate: number
  seconds: number
  wallSeconds: number
  outcome: LoadOutcome
  serviceCpu: number
  postgresCpu: number
  rssBytes: number
  throttled: string
}

/** What every run shares: the generator, the animals, the generator's limits, the subject's PostgreSQL backends. */
interface Bench {
  generator: Generator
  animals: number
  sockets: number
  connections: number
  backends: (appName: string | undefined) => Promise<Map<string, number>>
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

/**
 * One run of the generator on a subject: closed loop when `rate` is 0, else open loop at `rate`,
 * with what the subject, its PostgreSQL backends and its quota spent meanwhile.
 */
async function measure (bench: Bench, subject: Subject, cell: Pick<Run, 'database' | 'workload' | 'regime' | 'level' | 'capacity'>, rate: number, seconds: number): Promise<Run> {
  const { target, quota, appName } = subject
  await waitIdle(target)
  target.resetPeakRss()
  const job: LoadJob = { origin: target.origin, spec: workloadSpec(cell.workload, API_KEY, bench.animals), rate, sockets: rate === 0 ? bench.connections : bench.sockets, seconds, deadlineMs: DEADLINE_MS, lateMs: LATE_MS }
  const [stat, postgres, cpu, began] = [quota?.stat(), await bench.backends(appName), target.cpuSeconds(), performance.now()]
  const outcome = await bench.generator.run(job)
  const [wallSeconds, statAfter, postgresAfter] = [(performance.now() - began) / 1000, quota?.stat(), await bench.backends(appName)]
  return {
    ...cell,
    subject: subject.name,
    rate: rate === 0 ? outcome.arrivals / seconds : rate,
    seconds,
    wallSeconds,
    outcome,
    serviceCpu: target.cpuSeconds() - cpu,
    postgresCpu: [...postgresAfter].reduce((sum, [pid, seconds]) => sum + seconds - (postgres.get(pid) ?? 0), 0),
    rssBytes: target.peakRss(),
    throttled: stat === undefined || statAfter === undefined ? '–' : `${statAfter.nr_throttled! - stat.nr_throttled!} of ${statAfter.nr_periods! - stat.nr_periods!}`
  }
}

/**
 * The overload run's smoke, in `npm run bench -- --smoke`: on a started service, no quota,
 * capacity for a quarter of a second and one level (0.8x) for half a second; its table.
 */
export async function overloadSmoke (target: Target, scripts: string, loadCpus: string | undefined, animals: number): Promise<string> {
  const generator = startGenerator(scripts, loadCpus)
  try {
    const bench: Bench = { generator, animals, sockets: 100, connections: 10, backends: async () => new Map() }
    const subject: Subject = { name: 'service', target, quota: undefined, appName: undefined }
    const cell = { database: 'sqlite', workload: 'list', regime: 0 } as const
    const capacity = await measure(bench, subject, { ...cell, level: 'capacity', capacity: 0 }, 0, 0.25)
    const perSecond = capacity.outcome.good / 0.25
    const level = await measure(bench, subject, { ...cell, level: 0.8, capacity: perSecond }, Math.round(0.8 * perSecond), 0.5)
    return `\n## Overload smoke: ${renderTables([capacity, level]).slice('## '.length)}`
  } finally {
    generator.stop()
  }
}

/** The whole overload run; `cleanups` gets what must go however it ends (quotas, schemas, the generator). */
export async function overload (options: OverloadOptions, work: string, root: string, say: (text: string) => void, cleanups: Array<() => Promise<void>>): Promise<{ report: string, code: number }> {
  const began = performance.now()
  const pinned = availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0
  const [serverCpus, loadCpus] = pinned ? ['0', '1'] : [undefined, undefined]
  say('npm run build')
  if (spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' }).status !== 0) throw new Error('npm run build failed')
  const animals = 10_000
  const seeded = join(work, 'seeded.db')
  const animalsFile = join(work, 'animals.jsonl')
  const scripts = join(work, 'scripts')
  say(`petstore seed: ${animals} animals`)
  await Promise.all([
    petstore(root, ['seed', '--count', String(animals), '--database-url', `sqlite:${seeded}`]).then(async () => {
      await petstore(root, ['export', '--database-url', `sqlite:${seeded}`], animalsFile)
    }),
    compileScripts(root, scripts)
  ])
  const admin = options.postgres === undefined ? undefined : new pg.Client({ connectionString: options.postgres })
  if (admin !== undefined) { await admin.connect(); cleanups.push(async () => { await admin.end() }) }
  const generator = startGenerator(scripts, loadCpus)
  cleanups.push(async () => { generator.stop() })
  const bench: Bench = {
    generator,
    animals,
    sockets: options.sockets,
    connections: options.connections,
    // CPU seconds so far of the PostgreSQL backends serving a subject, by pid (they come and go with its pool).
    backends: async (appName) => {
      if (admin === undefined || appName === undefined) return new Map()
      const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [appName])
      return new Map(rows.map(({ pid }) => [String(pid), cpuSecondsOf([String(pid)])]))
    }
  }

  const analyzes: Array<() => Promise<void>> = []
  /** A subject on `database`: the service (seeded) or the peer (filled from the export at its start), in a quota of its own. */
  const start = async (name: string, database: string, env: Record<string, string>, peer: boolean): Promise<Subject> => {
    const slug = `${name}-${database}`.replace(/\W+/g, '-')
    let url = `sqlite:${join(work, `${slug}.db`)}`
    let appName: string | undefined
    if (database === 'postgres') {
      const schema = await createSchema(options.postgres!)
      cleanups.push(schema.drop)
      analyzes.push(schema.analyze)
      // Its backends are found by this name, to count their CPU.
      appName = `petstore-overload-${process.pid}-${slug}`
      const named = new URL(schema.url)
      named.searchParams.set('application_name', appName)
      url = named.href
      if (!peer) await petstore(root, ['seed', '--count', String(animals), '--database-url', url])
    } else if (!peer) {
      copyFileSync(seeded, url.slice('sqlite:'.length))
    }
    const placement = { cpus: serverCpus, logFile: join(work, `${slug}.log`) }
    const target = peer
      ? await startProcess(name, { args: () => [join(scripts, 'fastify.js')], env: { DATABASE_URL: url, BENCH_ANIMALS_FILE: animalsFile, BENCH_KEY: API_KEY, ...env }, cwd: scripts, readyPath: '/readyz', ...placement })
      : await startService(name, root, url, API_KEY, placement, { RATE_LIMIT: '0', ...env })
    const quota = cpuQuota(`petstore-overload-${process.pid}-${slug}`, options.share, target.pids())
    // Removed once its processes have stopped (run.ts stops every process before the cleanups).
    cleanups.push(async () => { quota.remove() })
    return { name, target, quota, appName }
  }

  const runs: Run[] = []
  const measured = async (subject: Subject, cell: Pick<Run, 'database' | 'workload' | 'regime' | 'level' | 'capacity'>, rate: number, seconds: number): Promise<Run> => {
    const entry = await measure(bench, subject, cell, rate, seconds)
    const { outcome } = entry
    say(`  ${subject.name}, ${cell.workload}, ${regimeOf(cell.regime)}, ${typeof cell.level === 'number' ? `${cell.level}x` : cell.level}: ${Math.round(outcome.good / seconds)} good/s, ${outcome.refused} refused, ${outcome.timeouts} timeouts, ${outcome.late} late`)
    return entry
  }
  for (const database of options.databases) {
    say(`${database}: starting ${options.subjects.join(' and ')}`)
    const subjects = await Promise.all(options.subjects.map(async (name) => {
      const peer = name === 'peer'
      const subject = await start(name, database, peer ? { BENCH_UNDER_PRESSURE: JSON.stringify(UNDER_PRESSURE) } : {}, peer)
      // In a closed loop each refusal is answered by the next request at once, and a stage against load refuses
      // much of it: each one's capacity is that of its twin without the stage.
      const sizer = await start(peer ? 'peer without under-pressure' : 'service, MAX_QUEUE_DELAY=off', database, peer ? {} : ADMISSION_OFF, peer)
      return { subject, sizer }
    }))
    const refusing = options.subjects.includes('service') ? await start('service refusing whole', database, REFUSING_ENV, false) : undefined
    // Every table the planner reads has fresh statistics before the first request.
    for (const analyze of analyzes.splice(0)) await analyze()
    for (const workload of options.workloads) {
      for (const { subject, sizer } of subjects) {
        // Warm, as a server up for a while is: compiled by the JIT without a quota (the compiler's threads would spend it).
        say(`${subject.name}, ${workload}: warm-up, no quota`)
        const warming = new Set([subject, sizer, ...(subject.name === 'service' && refusing !== undefined ? [refusing] : [])])
        for (const each of warming) {
          each.quota!.periodMs(undefined)
          await measure(bench, each, { database, workload, regime: 0, level: 'capacity', capacity: 0 }, 0, WARM_UP_SECONDS)
        }
        for (const regime of options.regimes) {
          const cell = { database, workload, regime }
          for (const each of warming) each.quota!.periodMs(regime)
          const atCapacity = await measured(sizer, { ...cell, level: 'capacity', capacity: 0 }, 0, options.duration)
          const capacity = atCapacity.outcome.good / options.duration
          runs.push(atCapacity)
          // Busy again before it is measured, as a server up for a while is: idle meanwhile, its heap shrank back.
          const rewarm = async (each: Subject, rate: number): Promise<void> => { await measure(bench, each, { ...cell, level: 'capacity', capacity }, Math.round(rate), WARM_UP_SECONDS) }
          await rewarm(subject, 0.5 * capacity)
          for (const level of options.levels) runs.push(await measured(subject, { ...cell, level, capacity }, Math.round(level * capacity), options.duration))
          if (regime === 100 && options.long > 0) runs.push(await measured(subject, { ...cell, level: 'long', capacity }, Math.round(3 * capacity), options.long))
          // At 3x, where the share r of a refusal's cost decides the goodput.
          if (subject.name === 'service' && refusing !== undefined) {
            await rewarm(refusing, 3 * capacity)
            runs.push(await measured(refusing, { ...cell, level: 'refusing', capacity }, Math.round(3 * capacity), options.duration))
          }
        }
      }
    }
    const all = [...subjects.flatMap(({ subject, sizer }) => [subject, sizer]), ...(refusing === undefined ? [] : [refusing])]
    await Promise.all([...new Set(all)].map(async ({ target }) => { await target.stop() }))
  }
  const report = renderOverload(options, runs, {
    command: ['npm run bench', '--', ...process.argv.slice(2)].join(' ').replace(/(\/\/[^:/@\s]+):[^@/\s]*@/g, '$1:***@'),
    commit: git(root, ['rev-parse', '--short', 'HEAD']) + (git(root, ['status', '--porcelain', '--', 'src', 'package.json']) === '' ? '' : ' (with changes)'),
    load: loadCpus === undefined ? 'unpinned' : `on core ${loadCpus}`,
    subjects: serverCpus === undefined ? 'unpinned' : `on core ${serverCpus}`,
    service: `node ${startArguments(root).join(' ')}`,
    animals,
    seconds: (performance.now() - began) / 1000
  })
  const failed = runs.filter((entry) => entry.outcome.other + entry.outcome.errors > 0 && entry.level !== 'refusing')
  for (const entry of failed) say(`${entry.subject} failed ${entry.outcome.other + entry.outcome.errors} requests on ${entry.workload}, ${entry.database}, ${regimeOf(entry.regime)}, ${entry.level}`)
  return { report, code: failed.length === 0 ? 0 : 1 }
}

const LABEL: Record<string, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }
const regimeOf = (regime: number): string => regime === 0 ? 'no quota' : `${regime} ms periods`
const rate = (value: number): string => Math.round(value).toLocaleString('en-US')
const ms = (value: number | null): string => value === null ? '–' : `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`
const times = (value: number): string => Number.isFinite(value) ? `${value.toFixed(2)}×` : '–'
const core = (seconds: number, wall: number): string => `${Math.round(100 * seconds / wall)} %`
const share = (part: number, whole: number): string => whole === 0 || part === 0 ? String(part) : `${rate(part)} (${(100 * part / whole).toFixed(1)} %)`
const table = (header: string[], rows: string[][]): string => [header, header.map((_, i) => i < 2 ? '---' : '---:'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n')
const invalid = (entry: Run): boolean => entry.level !== 'capacity' && entry.outcome.late > LATE_SHARE * entry.outcome.arrivals

function row (entry: Run): string[] {
  const { outcome, seconds, wallSeconds } = entry
  const level = entry.level === 'capacity' ? 'capacity (closed loop)' : `${entry.level}×`
  return [entry.subject, `${level}${invalid(entry) ? ' **invalid**' : ''}`, rate(entry.rate), rate(outcome.good / seconds), times(outcome.good / seconds / (entry.capacity || outcome.good / seconds)),
    rate(outcome.refused / seconds), ms(outcome.refusedP99Ms), share(outcome.timeouts, outcome.arrivals), ms(outcome.goodP99Ms), String(outcome.other + outcome.errors),
    `${Math.round(entry.rssBytes / 2 ** 20)} MiB`, core(entry.serviceCpu, wallSeconds), entry.database === 'postgres' ? core(entry.postgresCpu, wallSeconds) : '–', core(outcome.cpuSeconds, wallSeconds),
    entry.throttled, share(outcome.late, outcome.arrivals), `${Math.round(outcome.waitedMs)} ms`, rate(outcome.socketsMax)]
}

/** A table per workload, database and regime: capacity, then each level. */
function renderTables (runs: Run[]): string {
  const header = ['subject', 'level', 'arrivals/s', 'goodput/s', '÷ cap', 'refusals/s', 'refusals p99', 'timeouts', 'served p99', 'failed', 'peak RSS', 'CPU', 'CPU PostgreSQL', 'CPU generator', 'throttled', 'late', 'generator waited', 'sockets']
  const shown = runs.filter((entry) => entry.level !== 'long' && entry.level !== 'refusing')
  const groups = [...new Set(shown.map((entry) => `${entry.workload}|${entry.database}|${entry.regime}`))]
  return groups.map((group) => {
    const [workload, database, regime] = group.split('|') as [Workload, string, string]
    return `## ${workload} on ${LABEL[database]}, ${regimeOf(Number(regime))}: ${REQUESTS[workload]}\n\n` +
      table(header, shown.filter((entry) => `${entry.workload}|${entry.database}|${entry.regime}` === group).map(row))
  }).join('\n\n') + '\n'
}

function renderOverload (options: OverloadOptions, runs: Run[], about: { command: string, commit: string, load: string, subjects: string, service: string, animals: number, seconds: number }): string {
  const lines = [
    `# Overload: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${about.commit}`,
    '',
    `- Command: \`${about.command}\`; ${Math.round(about.seconds)} s. Machine: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, Linux ${release()}, Node.js ${process.version}.`,
    `- Subjects ${about.subjects}, each in a cgroup v1 CPU quota of ${options.share} of a core (\`cpu.cfs_quota_us\` = ${options.share} × \`cpu.cfs_period_us\`, \`cpu.shares\` at its most); PostgreSQL unpinned. ` +
      `The service: \`${about.service}\` on ${rate(about.animals)} animals, rate limit off (\`RATE_LIMIT=0\`), request log at \`info\` to a file. ` +
      `The peer: peers/fastify.ts with @fastify/under-pressure \`${JSON.stringify(UNDER_PRESSURE)}\`.`,
    `- Load: bench/open-loop.ts, one process ${about.load}, started once and given each run in turn. Before each subject and workload, ${WARM_UP_SECONDS} s closed loop without quota; in each regime, before its levels, ${WARM_UP_SECONDS} s at 0.5× (before r's run, at 3×), unreported. ` +
      `Capacity: ${options.connections} clients in a closed loop for ${options.duration} s, on a twin without the stage against load (in a closed loop each refusal is followed by the next request at once). ` +
      `Levels: arrivals at a fixed rate, that multiple of the regime's capacity, for ${options.duration} s, on keep-alive sockets opened on demand up to ${rate(options.sockets)}; ` +
      `latency counted from each scheduled arrival; no answer within ${DEADLINE_MS} ms: a timeout, its socket reset. A send more than ${LATE_MS} ms after its schedule (or never) is late; over ${100 * LATE_SHARE} % late, the run is **invalid**.`,
    '- Goodput: 2xx answered within the deadline, per second; ÷ cap: over the subject\'s own capacity in that regime. Refusals: 503 answers. Served p99: of the 2xx. Failed: other statuses and socket errors. ' +
      'CPU: user and system time over the run, in % of a core (the subject, its PostgreSQL backends, the generator). Throttled: `nr_throttled` of `nr_periods` in the quota\'s `cpu.stat`. ' +
      'Generator waited: the time its thread was runnable but had no CPU (a neighbour on its core). Sockets: the most open at once.',
    '',
    renderTables(runs).trimEnd()
  ]
  const long = runs.filter((entry) => entry.level === 'long')
  if (long.length > 0) {
    lines.push('', `## 3× for ${options.long} s in 100 ms periods`, '', 'Goodput over the capacity, overall and among the arrivals of each of the last 5 seconds.', '',
      table(['subject', 'workload, database', 'goodput ÷ cap', 'last 5 s, each ÷ cap', 'timeouts', 'refusals/s', 'late'], long.map((entry) => [entry.subject, `${entry.workload}, ${LABEL[entry.database]}`,
        times(entry.outcome.good / entry.seconds / entry.capacity) + (invalid(entry) ? ' **invalid**' : ''),
        entry.outcome.goodBySecond.slice(-5).map((good) => times(good / entry.capacity)).join(', '), share(entry.outcome.timeouts, entry.outcome.arrivals),
        rate(entry.outcome.refused / entry.seconds), share(entry.outcome.late, entry.outcome.arrivals)])))
  }
  // r: the service's CPU per refusal in a run it refuses whole, over its CPU per request at capacity in the same regime.
  const rows = runs.filter((entry) => entry.level === 'capacity' && entry.subject === 'service, MAX_QUEUE_DELAY=off').map((capacity) => {
    const refusing = runs.find((entry) => entry.level === 'refusing' && entry.workload === capacity.workload && entry.database === capacity.database && entry.regime === capacity.regime)
    const perRequest = capacity.serviceCpu / capacity.outcome.good
    const whole = refusing !== undefined && refusing.outcome.refused > 0 && refusing.outcome.good + refusing.outcome.other === 0
    const perRefusal = whole ? refusing.serviceCpu / refusing.outcome.refused : NaN
    return [`${capacity.workload}, ${LABEL[capacity.database]}, ${regimeOf(capacity.regime)}`, `${Math.round(perRequest * 1e6)} µs`, whole ? `${Math.round(perRefusal * 1e6)} µs` : '–',
      refusing === undefined ? '–' : share(refusing.outcome.timeouts, refusing.outcome.arrivals), whole ? (perRefusal / perRequest).toFixed(3) : 'n/a']
  })
  if (rows.length > 0) {
    lines.push('', '## r', '', 'The service\'s CPU per refusal, in a run at 3× its capacity\'s rate where it refuses every request it answers (`MAX_QUEUE_DELAY=0`), over its CPU per request at capacity; ' +
      'timeouts there mean it could not refuse every arrival in time, and their work counts in the CPU per refusal.', '',
    table(['workload, database, regime', 'CPU per request at capacity', 'CPU per refusal', 'timeouts refusing', 'r'], rows))
  }
  return `${lines.join('\n')}\n`
}
