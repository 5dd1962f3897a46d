/**
 * `npm run bench`: builds the service, seeds the animals, starts the service and its peers
 * afresh for each run, races them workload by workload within it, and prints the
 * markdown report (also written to bench/results/). Progress goes to stderr. Exit code 0
 * whatever the figures; 1 when something broke (a target failed requests or did not start);
 * 2 for a bad flag; 130 on Ctrl-C.
 */
import { spawnSync } from 'node:child_process'
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildBaseline, git, removeBaselines } from './baseline.js'
import { LOAD_TOOL, SCALE_WORKLOADS, WORKLOADS, runLoad, workloadSpec, type LoadSpec, type Workload } from './load.js'
import { OVERLOAD_USAGE, overload, overloadSmoke, parseOverloadOptions } from './overload.js'
import { renderReport, type Measurement, type Options, type ScaleFill } from './report.js'
import { ADMISSION_OFF, API_KEY, compileScripts, createSchema, deepCursors, petstore, startArguments, startProcess, startService, stopEveryProcess, type Target } from './targets.js'

// npm run bench runs from the project's root, whatever directory it was typed in.
const ROOT = process.cwd()
const SERVICE = 'service'
const SERVICE_PG = 'service, PostgreSQL'

const USAGE = `Usage: npm run bench -- [options]

  --duration S       measured seconds per run (default 10)
  --warmup S         warm-up seconds before each run (default 2)
  --runs N           runs of each target and workload, interleaved; medians reported (default 2)
  --connections N    concurrent connections (default 50)
  --only W,W         workloads among ${WORKLOADS.join(', ')} (default all)
  --postgres URL     PostgreSQL server for the service and the peers on PostgreSQL (default TEST_DATABASE_URL; none: skipped)
  --baseline COMMIT  adds that commit's service, built in a worktree of its own, beside this one
  --scale            adds the scale curve: the service alone at each size, list, deep-cursor list and get
  --sizes N,N        sizes of the scale curve (default 10000,1000000,10000000)
  --smoke            every target answers every workload for a quarter of a second: checks the bench works
  --overload         the overload run instead (--overload --help for its options)
`

function parseOptions (argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries([...['duration', 'warmup', 'runs', 'connections', 'only', 'postgres', 'baseline', 'sizes'].map((name) => [name, { type: 'string' }]),
      ...['scale', 'smoke', 'help'].map((name) => [name, { type: 'boolean' }])]) as Record<string, { type: 'string' | 'boolean' }>
  }) as { values: Record<string, string | boolean | undefined> }
  if (values.help === true) { process.stdout.write(USAGE); process.exit(0) }
  const number = (name: string, fallback: number, integer: boolean): number => {
    const value = Number(values[name] ?? fallback)
    if (!(value > 0) || (integer && !Number.isInteger(value))) throw new Error(`--${name}: must be a positive ${integer ? 'integer' : 'number'}`)
    return value
  }
  const only = typeof values.only === 'string' ? values.only.split(',') : [...WORKLOADS]
  const unknown = only.find((name) => !(WORKLOADS as readonly string[]).includes(name))
  if (unknown !== undefined) throw new Error(`--only: ${unknown} is not one of ${WORKLOADS.join(', ')}`)
  const smoke = values.smoke === true
  const sizes = typeof values.sizes === 'string' ? values.sizes.split(',').map(Number) : smoke ? [200, 2000] : [10_000, 1_000_000, 10_000_000]
  if (sizes.some((size) => !Number.isInteger(size) || size < 200)) throw new Error('--sizes: integers of 200 or more')
  const baseline = values.baseline as string | undefined
  if (baseline !== undefined && spawnSync('git', ['rev-parse', '--verify', '--quiet', `${baseline}^{commit}`], { cwd: ROOT }).status !== 0) throw new Error(`--baseline: ${baseline} is not a commit`)
  return {
    duration: smoke ? 0.25 : number('duration', 10, false),
    warmup: smoke ? 0 : Number(values.warmup ?? 2),
    runs: smoke ? 1 : number('runs', 2, true),
    connections: number('connections', 50, true),
    workloads: WORKLOADS.filter((workload) => only.includes(workload)),
    animals: smoke ? 200 : 10_000,
    postgres: (values.postgres as string | undefined) ?? (process.env.TEST_DATABASE_URL || undefined),
    baseline,
    scale: values.scale === true,
    sizes,
    smoke
  }
}

const began = performance.now()
const say = (text: string): void => { process.stderr.write(`bench ${String(Math.round((performance.now() - began) / 1000)).padStart(4)} s: ${text}\n`) }
const cleanups: Array<() => Promise<void>> = []

/** A target measured, and the service it is set against (the service on the same database). */
interface Entry { target: Target, start: () => Promise<Target>, base: string, spec: (workload: Workload) => LoadSpec }

/**
 * Replaces each target's process with a new one. A process here keeps for its life a speed up to
 * 20 % off another start's: one process per target would make that draw the result.
 */
async function restart (entries: Entry[]): Promise<void> {
  await Promise.all(entries.map(async (entry) => {
    await entry.target.stop()
    entry.target = await entry.start()
  }))
}

/** Reads a file once so its pages are in the OS page cache, as on a server up for a while. */
function warmPageCache (path: string): void {
  const chunk = Buffer.allocUnsafe(1 << 20)
  for (const file of [path, `${path}-wal`].filter(existsSync)) {
    const fd = openSync(file, 'r')
    while (readSync(fd, chunk) > 0);
    closeSync(fd)
  }
}

async function bench (options: Options, work: string): Promise<number> {
  const pinned = availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0
  const [serverCpus, loadCpus] = pinned ? ['0', '1'] : [undefined, undefined]
  const placement = (name: string): { cpus: string | undefined, logFile: string } => ({ cpus: serverCpus, logFile: join(work, `${name.replace(/\W+/g, '-')}.log`) })
  const measurements: Measurement[] = []
  const loadAverage = (): number => Number(spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.split(' ')[0])
  const startLoad = loadAverage()

  if (!options.smoke || !existsSync(join(ROOT, 'dist/cli/main.js'))) {
    say('npm run build')
    if (spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' }).status !== 0) throw new Error('npm run build failed')
  }
  const seed = async (root: string, url: string, count: number): Promise<number> => {
    const started = performance.now()
    await petstore(root, ['seed', '--count', String(count), '--database-url', url])
    return (performance.now() - started) / 1000
  }
  say(`petstore seed: ${options.animals} animals; petstore export for the peers`)
  const seeded = join(work, 'seeded.db')
  const animalsFile = join(work, 'animals.jsonl')
  const scripts = join(work, 'scripts')
  await Promise.all([
    seed(ROOT, `sqlite:${seeded}`, options.animals).then(async () => { await petstore(ROOT, ['export', '--database-url', `sqlite:${seeded}`], animalsFile) }),
    compileScripts(ROOT, scripts)
  ])
  const baseline = options.baseline === undefined ? undefined : buildBaseline(ROOT, options.baseline, say)

  const schemaFor = async (): Promise<{ url: string, analyze: () => Promise<void> }> => {
    const schema = await createSchema(options.postgres!)
    cleanups.push(schema.drop)
    return schema
  }
  const analyzes: Array<() => Promise<void>> = []
  // How the service sheds load is the overload run's; this closed loop measures what a request costs.
  const serviceOn = async (name: string, root: string, sqliteFile: string): Promise<() => Promise<Target>> => {
    if (sqliteFile !== '') {
      if (root === ROOT) copyFileSync(seeded, sqliteFile)
      else await seed(root, `sqlite:${sqliteFile}`, options.animals)
      return async () => await startService(name, root, `sqlite:${sqliteFile}`, API_KEY, placement(name), ADMISSION_OFF)
    }
    const schema = await schemaFor()
    await seed(root, schema.url, options.animals)
    analyzes.push(schema.analyze)
    return async () => await startService(name, root, schema.url, API_KEY, placement(name), ADMISSION_OFF)
  }
  const peer = async (name: string, script: string, database: 'sqlite' | 'pg'): Promise<() => Promise<Target>> => {
    let url = `sqlite:${join(work, `${name.replace(/\W+/g, '-')}.db`)}`
    if (database === 'pg') {
      const schema = await schemaFor()
      analyzes.push(schema.analyze)
      url = schema.url
    }
    return async () => await startProcess(name, {
      args: () => [join(scripts, `${script}.js`)],
      env: { DATABASE_URL: url, BENCH_ANIMALS_FILE: animalsFile, BENCH_KEY: API_KEY },
      cwd: scripts,
      readyPath: '/readyz',
      ...placement(name)
    })
  }

  say('starting the service and its peers')
  const starts: Array<[string, () => Promise<() => Promise<Target>>]> = [[SERVICE, async () => await serviceOn(SERVICE, ROOT, join(work, 'service.db'))]]
  if (baseline !== undefined) starts.push([SERVICE, async () => await serviceOn(baseline.name, baseline.root, join(work, 'baseline.db'))])
  starts.push([SERVICE, async () => await peer('Fastify app, SQLite', 'fastify', 'sqlite')], [SERVICE, async () => await peer('node:http + SQLite', 'bare', 'sqlite')])
  if (options.postgres !== undefined) {
    starts.push([SERVICE_PG, async () => await serviceOn(SERVICE_PG, ROOT, '')])
    if (baseline !== undefined) starts.push([SERVICE_PG, async () => await serviceOn(`${baseline.name}, PostgreSQL`, baseline.root, '')])
    starts.push([SERVICE_PG, async () => await peer('Fastify app, pg', 'fastify', 'pg')], [SERVICE_PG, async () => await peer('node:http + pg', 'bare', 'pg')])
  }
  // Started together, in the report's order: the peers fill their tables at start, before the analyze.
  const entries: Entry[] = await Promise.all(starts.map(async ([base, prepare]) => {
    const start = await prepare()
    return { target: await start(), start, base, spec: (workload: Workload) => workloadSpec(workload, API_KEY, options.animals) }
  }))
  // Every table the planner reads has fresh statistics before the first request.
  for (const analyze of analyzes) await analyze()

  const measure = async (section: string, entry: Entry, workload: Workload, run: number, spec: LoadSpec): Promise<void> => {
    const { target } = entry
    const load = { origin: target.origin, connections: options.connections, cpus: loadCpus, scripts }
    target.resetPeakRss()
    // One answered request first: what a target starts on its first request must not eat the window.
    await fetch(`${target.origin}${spec.paths?.[0] ?? (spec.idMax === undefined ? spec.path : `${spec.path}1`)}`, { method: spec.method, headers: spec.headers, body: spec.body }).then(async (response) => await response.arrayBuffer())
    if (options.warmup > 0) await runLoad(spec, { ...load, seconds: options.warmup })
    const cpuBefore = target.cpuSeconds()
    const result = await runLoad(spec, { ...load, seconds: options.duration })
    const cpuUs = result.requests > 0 ? (target.cpuSeconds() - cpuBefore) * 1e6 / result.requests : 0
    measurements.push({ section, target: target.name, base: entry.base, workload, run, ...result, cpuUs, rssBytes: target.peakRss() })
    say(`  ${target.name.padEnd(28)} ${workload.padEnd(11)} ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, failed ${result.failed}`)
  }
  for (let run = 1; run <= options.runs; run++) {
    if (run > 1) await restart(entries)
    for (const workload of options.workloads) {
      say(`${workload}, run ${run} of ${options.runs}`)
      // Every other run in reverse order: no target is always the one measured first.
      for (const entry of run % 2 === 1 ? entries : [...entries].reverse()) await measure('main', entry, workload, run, entry.spec(workload))
    }
  }
  // The overload run's smoke: its generator on the service, no quota.
  const overloadSection = options.smoke ? await overloadSmoke(entries[0]!.target, scripts, loadCpus, options.animals) : ''
  await Promise.all(entries.map(async ({ target }) => { await target.stop() }))

  const fills: ScaleFill[] = []
  if (options.scale) {
    const sized: Array<Entry & { file: string | undefined }> = []
    for (const database of ['SQLite', ...(options.postgres === undefined ? [] : ['PostgreSQL'])]) {
      for (const animals of options.sizes) {
        say(`scale: petstore seed of ${animals} animals on ${database}`)
        const file = database === 'SQLite' ? join(work, `scale-${animals}.db`) : undefined
        const url = file === undefined ? (await schemaFor()).url : `sqlite:${file}`
        const seconds = await seed(ROOT, url, animals)
        fills.push({ database, animals, seconds, bytes: file === undefined ? 0 : statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0) })
        const start = async (): Promise<Target> => await startService(`${database} ${animals}`, ROOT, url, API_KEY, placement(`scale-${database}-${animals}`))
        const target = await start()
        const cursors = await deepCursors(target.origin, API_KEY, animals, 1000)
        sized.push({ target, start, base: database, file, spec: (workload) => workloadSpec(workload, API_KEY, animals, cursors) })
      }
    }
    for (let run = 1; run <= options.runs; run++) {
      if (run > 1) await restart(sized)
      for (const workload of SCALE_WORKLOADS) {
        say(`scale: ${workload}, run ${run} of ${options.runs}`)
        for (const entry of sized) {
          // This machine's host evicts page cache it deems cold: a random get would wait for the disk.
          if (entry.file !== undefined) warmPageCache(entry.file)
          await measure('scale', entry, workload, run, entry.spec(workload))
        }
      }
    }
    await Promise.all(sized.map(async ({ target }) => { await target.stop() }))
  }

  const report = renderReport({
    options,
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ').replace(/(\/\/[^:/@\s]+):[^@/\s]*@/g, '$1:***@'),
    pinned,
    loadTool: LOAD_TOOL === 'wrk' ? `wrk ${spawnSync('/usr/bin/wrk', ['-v'], { encoding: 'utf8' }).stdout.split(' ')[1] ?? ''}`.trim() : 'autocannon',
    loadAverages: [startLoad, loadAverage()],
    commit: git(ROOT, ['rev-parse', '--short', 'HEAD']) + (git(ROOT, ['status', '--porcelain', '--', 'src', 'package.json']) === '' ? '' : ' (with changes)'),
    serviceArguments: `node ${startArguments(ROOT).join(' ')}`,
    baseline: baseline === undefined ? undefined : `${baseline.name}: ${baseline.subject}`,
    measurements,
    fills,
    seconds: (performance.now() - began) / 1000
  })
  publish(report + overloadSection, '', options.smoke, work)
  const failed = measurements.filter((measurement) => measurement.failed > 0)
  for (const { target, workload, failed: count } of failed) say(`${target} failed ${count} requests on ${workload}`)
  return failed.length === 0 ? 0 : 1
}

/** Prints the report and writes it to bench/results/ (`prefix` names the kind), or beside the smoke's data. */
function publish (report: string, prefix: string, smoke: boolean, work: string): void {
  process.stdout.write(report)
  const results = smoke ? join(work, 'results') : join(ROOT, 'bench/results')
  mkdirSync(results, { recursive: true })
  writeFileSync(join(results, `${prefix}${new Date().toISOString().slice(0, 16).replace(':', '-')}.md`), report)
  writeFileSync(join(results, `${prefix}latest.md`), report)
}

async function cleanUp (): Promise<void> {
  await stopEveryProcess()
  removeBaselines()
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => {})
}

// `--overload` is a bench of its own (overload.ts) on the same targets, cleanups and results.
const argv = process.argv.slice(2)
const overloadRun = argv.includes('--overload')
let main: (work: string) => Promise<number>
try {
  if (overloadRun) {
    const options = parseOverloadOptions(argv.filter((arg) => arg !== '--overload'))
    main = async (work) => {
      const { report, code } = await overload(options, work, ROOT, say, cleanups)
      publish(report, 'overload-', false, work)
      return code
    }
  } else {
    const options = parseOptions(argv)
    main = async (work) => await bench(options, work)
  }
} catch (err) {
  process.stderr.write(`bench: ${(err as Error).message}\n${overloadRun ? OVERLOAD_USAGE : USAGE}`)
  process.exit(2)
}
const work = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
process.once('SIGINT', () => { cleanUp().finally(() => process.exit(130)) })
let code = 1
try {
  code = await main(work)
} catch (err) {
  process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`)
} finally {
  await cleanUp()
  if (code === 0) rmSync(work, { recursive: true, force: true })
  else process.stderr.write(`bench: logs and data kept in ${work}\n`)
}
process.exitCode = code
