/**
 * The servers under load, each a child process of its own, started fresh for
 * every run: the service (production build), the ceiling, the peers and json-server.
 * Optionally pinned to one core with taskset, so the load generator keeps the other.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { SETTINGS } from '../src/config.js'

const READY_TIMEOUT_MS = 60_000
// The highest RATE_LIMIT takes: every request is counted, and none of the bench's is refused.
export const RATE_LIMIT_NEVER_REACHED = '1000000000'
const STOP_TIMEOUT_MS = 15_000

export interface Target {
  origin: string
  pid: number
  /** Peak resident memory in bytes: VmHWM of the process plus that of each process it started (cluster workers). */
  peakRss: () => number
  /** CPU seconds used so far, by the process and each process it started. */
  cpuSeconds: () => number
  /** SIGTERM, then SIGKILL if it has not exited within 15 s. */
  stop: () => Promise<void>
}

/** What differs from one kind of server to the next, once its port is known. */
export interface ProcessSpec {
  args: string[]
  env: Record<string, string>
  /** Variables of the bench's own environment it must not see. */
  unset?: readonly string[]
  cwd: string
  /** A GET that answers 200 once it serves. */
  readyPath: string
}

/** Where a server runs and writes, whatever it is. */
export interface Placement {
  /** Cores for taskset (`0`), or undefined to let the kernel place it. */
  cpus: string | undefined
  /** Where its stdout and stderr go. */
  logFile: string
}

/** True when taskset can pin processes here. */
export function canPin (): boolean {
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0
}

/**
 * A TCP port nobody listens on right now.
 * @example const port = await freePort()
 */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** `node ARGS`, through `taskset -c CPUS` when cores are given. */
export function nodeCommand (args: string[], cpus: string | undefined): [string, string[]] {
  return cpus === undefined ? [process.execPath, args] : ['taskset', ['-c', cpus, process.execPath, ...args]]
}

function parentOf (pid: string): string | undefined {
  try {
    // Field 4 of /proc/PID/stat, after the parenthesised name (which may hold spaces).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]
  } catch {
    return undefined
  }
}

function highWaterMark (pid: string): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

// Linux reports CPU time in ticks of 1/100 s (USER_HZ) on every architecture Node runs on.
const TICKS_PER_SECOND = 100

function cpuTicks (pid: string): number {
  try {
    // utime and stime: fields 14 and 15 of /proc/PID/stat, threads included.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** A process and its descendants (cluster workers). */
function processTree (pid: number): string[] {
  const pids = [String(pid)]
  try {
    const parents = new Map(readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map((name) => [name, parentOf(name)]))
    for (let i = 0; i < pids.length; i++) {
      for (const [child, parent] of parents) if (parent === pids[i]) pids.push(child)
    }
  } catch {
    return [String(pid)]
  }
  return pids
}

/**
 * Peak RSS of a process and its descendants, summed (0 where /proc is absent).
 * @example peakRssOf(child.pid!) // 61_440_000
 */
export function peakRssOf (pid: number): number {
  return processTree(pid).reduce((sum, each) => sum + highWaterMark(each), 0)
}

/**
 * CPU time used so far by a process and its descendants, in seconds (0 where /proc is absent).
 * @example cpuSecondsOf(child.pid!) // 12.34
 */
export function cpuSecondsOf (pid: number): number {
  return processTree(pid).reduce((sum, each) => sum + cpuTicks(each), 0) / TICKS_PER_SECOND
}

function tailOf (file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n')
  } catch {
    return ''
  }
}

async function waitForExit (child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true
  return await Promise.race([
    new Promise<boolean>((resolve) => child.once('exit', () => resolve(true))),
    // Unreferenced: the timer must not keep the bench alive once the process has exited.
    sleep(ms, false, { ref: false })
  ])
}

/** SIGTERM, and SIGKILL if it has not exited a while later. */
async function stopChild (child: ChildProcess): Promise<void> {
  child.kill('SIGTERM')
  if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
    child.kill('SIGKILL')
    await waitForExit(child, STOP_TIMEOUT_MS)
  }
}

// Every process started and not exited yet, those still starting included.
const live = new Set<ChildProcess>()

/**
 * Stops every process the bench started that still runs, one still starting included:
 * an interrupted bench leaves no server behind.
 * @example process.once('SIGINT', () => { stopEveryProcess().finally(() => process.exit(130)) })
 */
export async function stopEveryProcess (): Promise<void> {
  await Promise.all([...live].map(stopChild))
}

/**
 * Starts a Node process on a free port and resolves once its `readyPath` answers 200.
 * @throws Error with the end of its log when it exits or is not ready within 60 s
 * @example await startProcess('the ceiling', { cpus: '0', logFile }, (port) => ({ args: [script], env: { PORT: String(port) }, cwd, readyPath: '/readyz' }))
 */
export async function startProcess (name: string, placement: Placement, specFor: (port: number) => ProcessSpec): Promise<Target> {
  const port = await freePort()
  const spec = specFor(port)
  const logFile = placement.logFile
  // One log per target, begun anew at each start: a failure shows the run that failed.
  const log = openSync(logFile, 'w')
  const [command, args] = nodeCommand(spec.args, placement.cpus)
  const env = { ...process.env }
  for (const name of spec.unset ?? []) delete env[name]
  const child = spawn(command, args, { cwd: spec.cwd, env: { ...env, ...spec.env }, stdio: ['ignore', log, log] })
  closeSync(log)
  live.add(child)
  child.once('exit', () => live.delete(child))
  let spawnError: Error | undefined
  child.once('error', (err) => { spawnError = err })
  const origin = `http://127.0.0.1:${port}`
  const stop = async (): Promise<void> => { await stopChild(child) }
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    if (spawnError !== undefined || child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited at start (${spawnError?.message ?? child.exitCode ?? child.signalCode}); its log ${logFile} ends:\n${tailOf(logFile)}`)
    }
    try {
      const response = await fetch(`${origin}${spec.readyPath}`, { signal: AbortSignal.timeout(2_000) })
      await response.arrayBuffer()
      if (response.status === 200) break
    } catch {}
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`${name} was not ready within ${READY_TIMEOUT_MS / 1000} s; its log ${logFile} ends:\n${tailOf(logFile)}`)
    }
    await sleep(50)
  }
  return { origin, pid: child.pid!, peakRss: () => peakRssOf(child.pid!), cpuSeconds: () => cpuSecondsOf(child.pid!), stop }
}

export interface ServiceOptions extends Placement {
  root: string
  /** `sqlite:PATH` or `postgres://…` */
  databaseUrl: string
  apiKey: string
  workers: number
  /** Variables on top of the defaults (the OTEL_* of traces). */
  env?: Record<string, string>
}

/**
 * The node arguments of `npm start`, read from package.json: the service runs exactly as it ships.
 * @example startArguments(root) // ['--max-semi-space-size=4', 'dist/cli/main.js', 'serve']
 */
export function startArguments (root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const [command, ...args] = scripts.start.split(/\s+/)
  if (command !== 'node') throw new Error(`npm start runs ${command}, not node`)
  return args
}

/**
 * The service as it ships (`npm start`), logs on, the rate limit counting but too high to refuse.
 * @example const service = await startService({ root, databaseUrl: `sqlite:${path}`, apiKey, logFile, workers: 1, cpus: '0' })
 */
export async function startService (options: ServiceOptions): Promise<Target> {
  // The metrics listener on a free port: the default 9464 may be another instance's, or anything's on a shared machine.
  const metricsPort = await freePort()
  return await startProcess('the service', options, (port) => ({
    args: startArguments(options.root),
    env: {
      DATABASE_URL: options.databaseUrl,
      PETSTORE_API_KEYS: options.apiKey,
      RATE_LIMIT: RATE_LIMIT_NEVER_REACHED,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      WORKERS: String(options.workers),
      ...options.env
    },
    // The defaults for every other setting, whatever the shell that runs the bench has set (REDIS_URL…, traces).
    unset: [...SETTINGS.map((setting) => setting.env), ...Object.keys(process.env).filter((name) => name.startsWith('OTEL_'))],
    cwd: options.root,
    readyPath: '/readyz'
  }))
}

/** The compiled scripts of the ceiling and the peers (buildBenchScripts). */
export interface BenchScripts {
  ceiling: string
  fastifyMemory: string
  httpSqlite: string
  httpPg: string
}

const SCRIPTS = ['ceiling', 'animals', 'peers/fastify-memory', 'peers/http-sqlite', 'peers/http-pg']

/**
 * Compiles bench/ceiling.ts, the peers (bench/peers/) and what they import of bench/ to plain
 * JavaScript under `dir`, so they run on bare node like the service's dist/, with no TypeScript
 * loader in their memory. `dir/src` links to the service's dist/ (the Fastify peer imports the
 * service's schemas as the service runs them) and `dir/node_modules` to the project's.
 */
export async function buildBenchScripts (root: string, dir: string): Promise<BenchScripts> {
  // Loaded here, not at the top: the compiler takes seconds to load and only this needs it.
  const { default: ts } = await import('typescript')
  mkdirSync(join(dir, 'bench/peers'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n')
  symlinkSync(join(root, 'dist'), join(dir, 'src'))
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  for (const file of SCRIPTS) {
    const source = readFileSync(join(root, 'bench', `${file}.ts`), 'utf8')
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
    })
    writeFileSync(join(dir, 'bench', `${file}.js`), outputText)
  }
  const script = (file: string): string => join(dir, 'bench', `${file}.js`)
  return { ceiling: script('ceiling'), fastifyMemory: script('peers/fastify-memory'), httpSqlite: script('peers/http-sqlite'), httpPg: script('peers/http-pg') }
}

export interface ScriptOptions extends Placement {
  /** A script of buildBenchScripts. */
  script: string
  animals: number
  /** What else it reads from its environment. */
  env?: Record<string, string>
}

/** A compiled bench script (the ceiling, a peer) on a free port: PORT and BENCH_ANIMALS, and its own variables. */
export async function startScript (name: string, options: ScriptOptions): Promise<Target> {
  return await startProcess(name, options, (port) => ({
    args: [options.script],
    env: { PORT: String(port), BENCH_ANIMALS: String(options.animals), ...options.env },
    cwd: join(options.script, '..'),
    readyPath: '/readyz'
  }))
}

export interface CeilingOptions extends Placement {
  script: string
  animals: number
  apiKey: string
}

/** The ceiling (bench/ceiling.ts, compiled by buildBenchScripts) on a free port. */
export async function startCeiling (options: CeilingOptions): Promise<Target> {
  return await startScript('the ceiling', { ...options, env: { BENCH_KEY: options.apiKey } })
}

export interface FeatureCostsOptions extends Placement {
  root: string
  apiKey: string
  animals: number
  /** A migrated SQLite file of the same animals. */
  databasePath: string
  /** The steps' features, FEATURE_STEPS' names. */
  features: readonly string[]
}

/**
 * The feature-costs server (bench/feature-costs.ts) with the node flags of `npm start`,
 * from the TypeScript sources: it is built of the service's own modules.
 */
export async function startFeatureCosts (options: FeatureCostsOptions): Promise<Target> {
  const flags = startArguments(options.root).filter((arg) => arg.startsWith('--'))
  return await startProcess('the feature-costs server', options, (port) => ({
    args: [...flags, '--import', 'tsx', join(options.root, 'bench/feature-costs.ts')],
    env: { PORT: String(port), BENCH_KEY: options.apiKey, BENCH_ANIMALS: String(options.animals), BENCH_DB: options.databasePath, FEATURES: options.features.join(',') },
    cwd: options.root,
    readyPath: '/readyz'
  }))
}

export interface JsonServerOptions extends Placement {
  root: string
  /** Its db.json: `{"pets":[…]}`; json-server writes every create back to it. */
  dbFile: string
}

/** json-server 0.17 with its own CLI, quiet (no request log) so it runs at its best. */
export async function startJsonServer (options: JsonServerOptions): Promise<Target> {
  return await startProcess('json-server', options, (port) => ({
    args: [join(options.root, 'node_modules/json-server/lib/cli/bin.js'), options.dbFile, '--port', String(port), '--host', '127.0.0.1', '--quiet'],
    env: {},
    cwd: join(options.dbFile, '..'),
    readyPath: '/pets?_limit=1'
  }))
}
