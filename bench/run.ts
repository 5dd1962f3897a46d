/**
 * `npm run bench`: builds the service, fills the data, then runs every workload
 * against the service, the baseline build if asked, the ceiling and json-server,
 * interleaved, and prints the markdown report (also written to bench/results/).
 * Progress goes to stderr. Exit code 0 whatever the figures; 1 when something
 * broke; 2 for a bad flag.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildBaseline, isCommit, removeBaselines, type Baseline } from './baseline.js'
import { copyDatabase, deepCursors, hasSeedCommand, importAnimals, seedAnimals, warmPageCache, writeJsonServerDb } from './fixtures.js'
import { combineResults, detectLoadTool, runLoad, type LoadResult, type LoadSpec, type LoadTool } from './load.js'
import { machineFacts, waitForQuietMachine } from './machine.js'
import { runNpm, stopNpm } from './npm.js'
import { OptionsError, USAGE, parseBenchOptions, type BenchOptions } from './options.js'
import { DEPLOYMENT_SHAPES, PEERS, SERVICE_ON_POSTGRES, renderReport, type ScaleSize } from './report.js'
import { summarize, type Measurement } from './stats.js'
import { COST_WORKLOADS, FEATURE_STEPS, stepFeatures } from './feature-steps.js'
import { buildBenchScripts, canPin, startArguments, startCeiling, startFeatureCosts, startJsonServer, startScript, startService, stopEveryProcess, type BenchScripts, type Placement, type Target } from './targets.js'
import { apiWorkload, jsonServerWorkload } from './workloads.js'
import { createSchema } from '../test/postgres-schema.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const API_KEY = 'bench-key-0123456789abcdef'
const DEEP_CURSORS = 1000
/** Sizes `petstore import` may fill when `petstore seed` is missing; past that the JSON Lines file gets big. */
const IMPORT_MAX = 1_000_000
/** The longest wait for a quiet machine before a run. */
const QUIET_WAIT_MAX_S = 60

/** Where each run happens: cores, files. */
interface Context {
  options: BenchOptions
  tool: LoadTool
  work: string
  serverCpus: string | undefined
  loadCpus: string | undefined
  measurements: Measurement[]
}

const began = performance.now()

function progress (message: string): void {
  process.stderr.write(`bench ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s: ${message}\n`)
}

/** The baseline build with the data its own CLI filled. */
interface BaselineTarget extends Baseline {
  seededDb: string
}

/**
 * Starts a target (or several instances, the connections split between them and
 * loaded at once, one load process each), warms it up, measures it, notes its
 * peak RSS and its CPU time per request (summed over the instances), and stops it.
 */
async function measure (context: Context, run: { group: string, target: string, workload: string, spec: LoadSpec, loadCpus: string | undefined }, ...starts: Array<() => Promise<Target>>): Promise<void> {
  const { options } = context
  const targets: Target[] = []
  // A smoke run only checks that the bench works: it notes how busy the machine is, without waiting.
  const quiet = await waitForQuietMachine(options.smoke ? 0 : QUIET_WAIT_MAX_S)
  try {
    for (const start of starts) {
      const target = await start()
      targets.push(target)
    }
    const loads = targets.map((target, index) => {
      // A directory per load process: each writes its own Lua script.
      const workDir = join(context.work, `load-${index}`)
      mkdirSync(workDir, { recursive: true })
      const connections = Math.floor(options.connections / targets.length) + (index < options.connections % targets.length ? 1 : 0)
      return { tool: context.tool, origin: target.origin, connections, cpus: run.loadCpus, workDir }
    })
    const loadAll = async (seconds: number): Promise<LoadResult> =>
      combineResults(await Promise.all(loads.map(async (load) => await runLoad(run.spec, { ...load, seconds }))))
    // One answered request first: what a target starts on its first request (the SQLite writer
    // thread) must not eat a short warm-up and leave the measured seconds empty.
    await Promise.all(targets.map(async (target) => { await prime(target.origin, run.spec) }))
    if (options.warmup > 0) await loadAll(options.warmup)
    const cpuSeconds = (): number => targets.reduce((sum, target) => sum + target.cpuSeconds(), 0)
    const cpuBefore = cpuSeconds()
    const result = await loadAll(options.duration)
    const cpuUsPerRequest = result.requests > 0 ? (cpuSeconds() - cpuBefore) * 1e6 / result.requests : 0
    const peakRssBytes = targets.reduce((sum, target) => sum + target.peakRss(), 0)
    context.measurements.push({ group: run.group, target: run.target, workload: run.workload, result, peakRssBytes, cpuUsPerRequest, quiet })
    progress(`  ${run.target.padEnd(18)} ${run.workload.padEnd(12)} ${Math.round(result.reqPerSec)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, non-2xx ${result.non2xx}` +
      `; before it ${Math.round(quiet.busyShare * 100)} % of a core busy${quiet.waitedSeconds >= 1 ? ` after waiting ${Math.round(quiet.waitedSeconds)} s` : ''}`)
  } finally {
    await Promise.all(targets.map(async (target) => await target.stop()))
  }
}

/** Sends the workload's request once and waits for its answer (an id of 1 where ids are drawn). */
async function prime (origin: string, spec: LoadSpec): Promise<void> {
  const path = spec.paths?.[0] ?? (spec.randomIdMax === undefined ? spec.path : `${spec.path}1`)
  const response = await fetch(`${origin}${path}`, { method: spec.method, headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(60_000) })
  await response.arrayBuffer()
}

/** Measures a target on a PostgreSQL schema of its own, made for the run and dropped after it. */
async function measureOnSchema (context: Context, run: Parameters<typeof measure>[1], start: (url: string) => Promise<Target>): Promise<void> {
  const schema = await createSchema(context.options.postgres!, 'bench')
  try {
    await measure(context, run, async () => await start(schema.url))
  } finally {
    await schema.drop()
  }
}

/**
 * The main comparison: every workload, every run, the targets in turn; with the peers, the
 * service on PostgreSQL and the pg peer when a PostgreSQL server is given.
 */
async function compareTargets (context: Context, seededDb: string, baseline: BaselineTarget | undefined, jsonSeed: string | undefined, scripts: BenchScripts): Promise<void> {
  const { options, work, serverCpus, loadCpus } = context
  const runDb = join(work, 'run.db')
  const peerDb = join(work, 'peer.db')
  const onPostgres = options.peers && options.postgres !== undefined
  const placement = (name: string): Placement => ({ cpus: serverCpus, logFile: join(work, `${name}.log`) })
  for (const workload of options.workloads) {
    for (let run = 1; run <= options.runs; run++) {
      progress(`${workload}, run ${run} of ${options.runs}`)
      const api = apiWorkload(workload, API_KEY, options.animals)
      const main = (target: string) => ({ group: 'main', target, workload, spec: api, loadCpus })
      copyDatabase(seededDb, runDb)
      await measure(context, main('service'), async () =>
        await startService({ root: ROOT, databaseUrl: `sqlite:${runDb}`, apiKey: API_KEY, workers: 1, ...placement('service') }))
      if (onPostgres) {
        await measureOnSchema(context, main(SERVICE_ON_POSTGRES), async (url) => {
          await importAnimals(ROOT, url, options.animals, work)
          return await startService({ root: ROOT, databaseUrl: url, apiKey: API_KEY, workers: 1, ...placement('service-postgres') })
        })
      }
      if (baseline !== undefined) {
        copyDatabase(baseline.seededDb, runDb)
        await measure(context, main(baseline.target), async () =>
          await startService({ root: baseline.root, databaseUrl: `sqlite:${runDb}`, apiKey: API_KEY, workers: 1, ...placement('baseline') }))
      }
      await measure(context, main('ceiling'), async () =>
        await startCeiling({ script: scripts.ceiling, animals: options.animals, apiKey: API_KEY, ...placement('ceiling') }))
      if (options.peers) {
        await measure(context, main(PEERS.fastify), async () =>
          await startScript(PEERS.fastify, { script: scripts.fastifyMemory, animals: options.animals, ...placement('peer-fastify') }))
        // A new file each run, filled by the peer at start: creates never reach the next run.
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${peerDb}${suffix}`, { force: true })
        await measure(context, main(PEERS.sqlite), async () =>
          await startScript(PEERS.sqlite, { script: scripts.httpSqlite, animals: options.animals, env: { BENCH_DB: peerDb }, ...placement('peer-sqlite') }))
      }
      if (onPostgres) {
        await measureOnSchema(context, main(PEERS.pg), async (url) =>
          await startScript(PEERS.pg, { script: scripts.httpPg, animals: options.animals, env: { DATABASE_URL: url }, ...placement('peer-pg') }))
      }
      if (jsonSeed === undefined) continue
      const runJson = join(work, 'json-server', 'db.json')
      copyFileSync(jsonSeed, runJson)
      await measure(context, { group: 'main', target: 'json-server', workload, spec: jsonServerWorkload(workload, options.animals), loadCpus }, async () =>
        await startJsonServer({ root: ROOT, dbFile: runJson, logFile: join(work, 'json-server.log'), cpus: serverCpus }))
    }
  }
}

/**
 * The ceiling, then the feature-costs server with no feature and with each step, interleaved
 * within each run, pinned as in the main comparison.
 */
async function compareFeatureCosts (context: Context, seededDb: string, ceilingScript: string): Promise<void> {
  const { options, work, serverCpus, loadCpus } = context
  const runDb = join(work, 'run.db')
  for (const workload of COST_WORKLOADS.filter((each) => options.workloads.includes(each))) {
    const spec = apiWorkload(workload, API_KEY, options.animals)
    for (let run = 1; run <= options.runs; run++) {
      progress(`feature costs: ${workload}, run ${run} of ${options.runs}`)
      await measure(context, { group: 'costs', target: 'ceiling', workload, spec, loadCpus }, async () =>
        await startCeiling({ script: ceilingScript, animals: options.animals, apiKey: API_KEY, logFile: join(work, 'ceiling.log'), cpus: serverCpus }))
      for (const step of ['none', ...FEATURE_STEPS] as const) {
        copyDatabase(seededDb, runDb)
        const features = step === 'none' ? [] : stepFeatures(step)
        await measure(context, { group: 'costs', target: step, workload, spec, loadCpus }, async () =>
          await startFeatureCosts({ root: ROOT, apiKey: API_KEY, animals: options.animals, databasePath: runDb, features, logFile: join(work, 'feature-costs.log'), cpus: serverCpus }))
      }
    }
  }
}

/** WORKERS=2 against WORKERS=1, nothing pinned in either leg. */
async function compareWorkers (context: Context, seededDb: string): Promise<void> {
  const { options, work } = context
  const runDb = join(work, 'run.db')
  for (const workload of options.workloads) {
    for (let run = 1; run <= options.runs; run++) {
      progress(`${workload} with WORKERS=1 and 2, run ${run} of ${options.runs}`)
      for (const workers of [1, 2]) {
        copyDatabase(seededDb, runDb)
        await measure(context, { group: 'workers', target: `WORKERS=${workers}`, workload, spec: apiWorkload(workload, API_KEY, options.animals), loadCpus: undefined }, async () =>
          await startService({ root: ROOT, databaseUrl: `sqlite:${runDb}`, apiKey: API_KEY, logFile: join(work, 'service.log'), workers, cpus: undefined }))
      }
    }
  }
}

/**
 * The service with traces on against off, interleaved, pinned as the main comparison: every
 * request sampled (the SDK's default), its spans exported over OTLP/HTTP to a sink in this process.
 */
async function compareTracing (context: Context, seededDb: string): Promise<void> {
  const { options, work, serverCpus, loadCpus } = context
  const runDb = join(work, 'run.db')
  const sink = createServer((request, response) => { request.resume().once('end', () => response.end()) })
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
  const traces = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(sink.address() as AddressInfo).port}` }
  try {
    for (const workload of options.workloads) {
      for (let run = 1; run <= options.runs; run++) {
        progress(`${workload} with traces off and on, run ${run} of ${options.runs}`)
        for (const [target, env] of [['traces off', {}], ['traces on', traces]] as const) {
          copyDatabase(seededDb, runDb)
          await measure(context, { group: 'tracing', target, workload, spec: apiWorkload(workload, API_KEY, options.animals), loadCpus }, async () =>
            await startService({ root: ROOT, databaseUrl: `sqlite:${runDb}`, apiKey: API_KEY, logFile: join(work, 'service.log'), workers: 1, cpus: serverCpus, env }))
        }
      }
    }
  } finally {
    sink.close()
  }
}

/**
 * The deployment shapes, interleaved within each run: one process and WORKERS=2 on
 * SQLite, then one and two instances on PostgreSQL, each run on a schema of its own
 * filled with the same animals and dropped after it (so creates never pile up).
 */
async function compareDeployments (context: Context, seededDb: string): Promise<void> {
  const { options, work, serverCpus, loadCpus } = context
  const runDb = join(work, 'run.db')
  const service = (databaseUrl: string, workers: number, cpus: string | undefined, instance = 0) => async (): Promise<Target> =>
    await startService({ root: ROOT, databaseUrl, apiKey: API_KEY, logFile: join(work, `service-${instance}.log`), workers, cpus })
  for (const workload of options.workloads) {
    const spec = apiWorkload(workload, API_KEY, options.animals)
    for (let run = 1; run <= options.runs; run++) {
      progress(`${workload} in each deployment shape, run ${run} of ${options.runs}`)
      copyDatabase(seededDb, runDb)
      await measure(context, { group: 'deployments', target: DEPLOYMENT_SHAPES[0], workload, spec, loadCpus }, service(`sqlite:${runDb}`, 1, serverCpus))
      copyDatabase(seededDb, runDb)
      await measure(context, { group: 'deployments', target: DEPLOYMENT_SHAPES[1], workload, spec, loadCpus: undefined }, service(`sqlite:${runDb}`, 2, undefined))
      if (options.postgres === undefined) continue
      for (const instances of [1, 2]) {
        const schema = await createSchema(options.postgres, 'bench')
        try {
          await importAnimals(ROOT, schema.url, options.animals, work)
          // One instance is pinned like the one process; two share both cores, as WORKERS=2 does.
          const [shape, cpus, load] = instances === 1 ? [DEPLOYMENT_SHAPES[2], serverCpus, loadCpus] : [DEPLOYMENT_SHAPES[3], undefined, undefined]
          const starts = Array.from({ length: instances }, (_, instance) => service(schema.url, 1, cpus, instance))
          await measure(context, { group: 'deployments', target: shape, workload, spec, loadCpus: load }, ...starts)
        } finally {
          await schema.drop()
        }
      }
    }
  }
}

/** Fills one database per size (seed, or import for small sizes without it). */
async function fillScaleDatabases (context: Context): Promise<Array<ScaleSize & { path: string, cursors: string[] }>> {
  const seed = hasSeedCommand(ROOT)
  const tooBig = context.options.sizes.filter((size) => size > IMPORT_MAX)
  if (!seed && tooBig.length > 0) {
    throw new Error(`--scale: sizes above ${IMPORT_MAX} (${tooBig.join(', ')}) need \`petstore seed\`, which this build lacks; pass --sizes up to ${IMPORT_MAX}`)
  }
  const filled = []
  for (const animals of context.options.sizes) {
    const path = join(context.work, `scale-${animals}.db`)
    progress(`filling ${animals} animals with petstore ${seed ? 'seed' : 'import'}`)
    const loadSeconds = seed ? await seedAnimals(ROOT, path, animals) : await importAnimals(ROOT, `sqlite:${path}`, animals, context.work)
    const cursors = await deepCursors(path, animals, DEEP_CURSORS)
    const databaseBytes = statSync(path).size + (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0)
    filled.push({ animals, loadedBy: seed ? 'seed' : 'import', loadSeconds, databaseBytes, path, cursors })
  }
  return filled
}

/** List, deep-cursor list and get at each size, sizes interleaved within a run. */
async function scaleCurve (context: Context, sizes: Array<ScaleSize & { path: string, cursors: string[] }>): Promise<void> {
  const { options, work, serverCpus, loadCpus } = context
  const headers = { authorization: `Bearer ${API_KEY}` }
  for (const workload of ['list', 'deep-list', 'get'] as const) {
    for (let run = 1; run <= options.runs; run++) {
      progress(`scale: ${workload}, run ${run} of ${options.runs}`)
      for (const size of sizes) {
        const spec: LoadSpec = workload === 'deep-list'
          ? { method: 'GET', path: '/v1/pets?limit=20', paths: size.cursors.map((cursor) => `/v1/pets?limit=20&cursor=${cursor}`), headers }
          : apiWorkload(workload, API_KEY, size.animals)
        warmPageCache(size.path)
        await measure(context, { group: 'scale', target: String(size.animals), workload, spec, loadCpus }, async () =>
          await startService({ root: ROOT, databaseUrl: `sqlite:${size.path}`, apiKey: API_KEY, logFile: join(work, 'service.log'), workers: 1, cpus: serverCpus }))
      }
    }
  }
}

/** What broke in the measurements: failed requests on any target but json-server. */
function problemsOf (measurements: Measurement[]): string[] {
  const problems: string[] = []
  for (const summary of summarize(measurements)) {
    if (summary.target === 'json-server') continue
    if (summary.non2xx > 0 || summary.socketErrors > 0) {
      problems.push(`${summary.target} (${summary.group}) on ${summary.workload}: ${summary.non2xx} non-2xx responses, ${summary.socketErrors} socket errors`)
    }
  }
  return problems
}

function timestamp (date: string): string {
  return date.replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z')
}

async function bench (options: BenchOptions, work: string): Promise<number> {
  const started = performance.now()
  const tool = detectLoadTool(options.load)
  const pinned = canPin() && availableParallelism() >= 2
  const context: Context = { options, tool, work, serverCpus: pinned ? '0' : undefined, loadCpus: pinned ? '1' : undefined, measurements: [] }
  const facts = machineFacts()

  // The smoke run checks the harness: it takes dist/ as it is when there is one.
  if (!options.smoke || !existsSync(join(ROOT, 'dist/cli/main.js'))) {
    progress('npm run build')
    await runNpm(ROOT, ['run', '--silent', 'build'])
  }
  progress(`filling ${options.animals} animals with petstore import`)
  const seededDb = join(work, 'seeded.db')
  await importAnimals(ROOT, `sqlite:${seededDb}`, options.animals, work)
  let baseline: BaselineTarget | undefined
  if (options.baseline !== undefined) {
    const built = await buildBaseline(ROOT, options.baseline, progress)
    progress(`baseline: filling ${options.animals} animals with its petstore import`)
    // Its own CLI fills its own file: the old build may keep another schema.
    baseline = { ...built, seededDb: join(work, 'baseline-seeded.db') }
    await importAnimals(built.root, `sqlite:${baseline.seededDb}`, options.animals, work)
  }
  const scripts = await buildBenchScripts(ROOT, join(work, 'scripts'))
  let jsonSeed: string | undefined
  if (options.jsonServer) {
    mkdirSync(join(work, 'json-server'))
    jsonSeed = join(work, 'json-server-seed.json')
    writeJsonServerDb(jsonSeed, options.animals)
  }
  // Fill the scale databases first: a missing seed command fails before the long part.
  const scaleSizes = options.scale ? await fillScaleDatabases(context) : []

  await compareTargets(context, seededDb, baseline, jsonSeed, scripts)
  if (options.costs) await compareFeatureCosts(context, seededDb, scripts.ceiling)
  if (options.workers) await compareWorkers(context, seededDb)
  if (options.tracing) await compareTracing(context, seededDb)
  if (options.deployments) await compareDeployments(context, seededDb)
  if (options.scale) await scaleCurve(context, scaleSizes)

  const problems = problemsOf(context.measurements)
  const report = renderReport({
    facts,
    // A password in --postgres stays out of the report.
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ').replace(/(\/\/[^:/@\s]+):[^@/\s]*@/g, '$1:***@'),
    options,
    tool,
    pinned,
    summaries: summarize(context.measurements),
    quiet: context.measurements.map((measurement) => measurement.quiet),
    scaleSizes: scaleSizes.map(({ animals, loadedBy, loadSeconds, databaseBytes }) => ({ animals, loadedBy, loadSeconds, databaseBytes })),
    serviceArguments: startArguments(ROOT),
    baseline: baseline === undefined ? undefined : { target: baseline.target, commit: baseline.commit, subject: baseline.subject, serviceArguments: startArguments(baseline.root) },
    elapsedSeconds: (performance.now() - started) / 1000,
    problems
  })
  process.stdout.write(report)
  // A smoke run leaves nothing behind: its report goes to the temporary directory, removed at exit.
  const results = options.smoke ? join(work, 'results') : join(ROOT, 'bench/results')
  mkdirSync(results, { recursive: true })
  writeFileSync(join(results, `${timestamp(facts.date)}.md`), report)
  writeFileSync(join(results, 'latest.md'), report)
  progress(`report written to ${join(results, 'latest.md')}`)
  return problems.length === 0 ? 0 : 1
}

async function main (): Promise<void> {
  let options: BenchOptions
  try {
    options = parseBenchOptions(process.argv.slice(2))
  } catch (err) {
    if (!(err instanceof OptionsError)) throw err
    process.stderr.write(`bench: ${err.message}\n${USAGE}`)
    process.exit(2)
  }
  if (options.help) {
    process.stdout.write(USAGE)
    return
  }
  if (options.baseline !== undefined && !isCommit(ROOT, options.baseline)) {
    process.stderr.write(`bench: --baseline: ${options.baseline} is not a commit of this repository\n${USAGE}`)
    process.exit(2)
  }
  const work = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
  // Ctrl-C stops the servers and builds too, not only the bench, even a server still starting; then the baseline's worktree goes.
  process.once('SIGINT', () => { Promise.all([stopEveryProcess(), stopNpm()]).finally(() => { removeBaselines(); process.exit(130) }) })
  let code = 1
  try {
    code = await bench(options, work)
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n`)
  } finally {
    await stopEveryProcess()
    removeBaselines()
    // Logs stay for a look when something broke.
    if (code === 0) rmSync(work, { recursive: true, force: true })
    else process.stderr.write(`bench: logs and data kept in ${work}\n`)
  }
  process.exitCode = code
}

await main()
