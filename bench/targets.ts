/** Every process the bench starts (the servers under load, the closed loop, the CLI), and what goes at its end. */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { closeSync, copyFileSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { say } from './flags.js'
import { API_KEY, type LoadResult, type LoadSpec } from './load.js'

// npm run bench runs from the project's root, whatever directory it was typed in.
export const ROOT = process.cwd()
/** Where `npm run bench` put the bench's scripts compiled to plain JavaScript (run.js among them). */
export const BUILT = fileURLToPath(new URL('.', import.meta.url))
/** Cores 0 (the servers) and 1 (the load) when there are two and `taskset` works, else none. */
export const PINNED = availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0
export const [SERVER_CPUS, LOAD_CPUS] = PINNED ? ['0', '1'] : []

const live = new Set<ChildProcess>()
const cleanups: Array<() => Promise<void>> = []

/** Has `cleanup` run at the end, however the bench ends, once every process it started has stopped. */
export const atEnd = (cleanup: () => Promise<void>): void => { cleanups.push(cleanup) }

/** Stops every process the bench started that still runs, then runs the cleanups (Ctrl-C, a failure, the end). */
export async function cleanUp (): Promise<void> {
  await Promise.all([...live].map(stopChild))
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => {})
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

async function stopChild (child: ChildProcess): Promise<void> {
  if (exited(child)) return
  const exit = once(child, 'exit')
  child.kill('SIGTERM')
  if (await Promise.race([exit.then(() => true), sleep(15_000, false, { ref: false })])) return
  child.kill('SIGKILL')
  await exit
}

const read = (path: string): string => { try { return readFileSync(path, 'utf8') } catch { return '' } }

/** Where the kernel's range for listen(0) and outgoing connections begins (ip_local_port_range). */
const EPHEMERAL_FROM = Number(read('/proc/sys/net/ipv4/ip_local_port_range').split(/\s+/)[0]) || 32_768
const givenPorts = new Set<number>()

/** A port that binds now, below the kernel's range: another program's listen(0) or connection takes none there. */
export async function freePort (): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (EPHEMERAL_FROM - 10_000))
    if (givenPorts.has(port)) continue
    const server = createServer().listen(port, '127.0.0.1')
    if (!await once(server, 'listening').then(() => true, () => false)) continue
    givenPorts.add(port)
    await once(server.close(), 'close')
    return port
  }
}

/** `command` (node when not given) with `args`, on cores `cpus` when given. */
export function pinned (cpus: string | undefined, args: string[], command = process.execPath): [string, string[]] {
  return cpus === undefined ? [command, args] : ['taskset', ['-c', cpus, command, ...args]]
}

/** Runs `command` in `cwd`; its stdout, trimmed; throws its output if it fails. */
export function run (cwd: string, command: string, args: string[]): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 256 * 2 ** 20 })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${(result.stdout + result.stderr).trim()}`)
  return result.stdout.trim()
}

/** The closed loop: autocannon.ts in a process of its own on the load's core, `connections` clients for `seconds`. */
export async function runLoad (options: { spec: LoadSpec, origin: string, connections: number, seconds: number }) {
  const [command, args] = pinned(LOAD_CPUS, [`${BUILT}autocannon.js`, JSON.stringify(options)])
  return JSON.parse((await promisify(execFile)(command, args)).stdout) as LoadResult
}

interface Start {
  /** The program, node when not given; PORT in its environment when `port` is not given. */
  command?: string
  args: string[]
  env: Record<string, string>
  cwd: string
  readyPath: string
  port?: number
  cpus: string | undefined
  logFile: string
}

/** Starts a program on a free port, pinned to `cpus`, output to `logFile`; resolves once `readyPath` answers 200. */
export async function startProcess (name: string, options: Start) {
  const port = options.port ?? await freePort()
  const log = openSync(options.logFile, 'w')
  const [command, args] = pinned(options.cpus, options.args, options.command)
  // Only what it is told: no setting of the shell that runs the bench (DATABASE_URL, OTEL_*) leaks in.
  const env = { PATH: process.env.PATH ?? '', PORT: String(port), ...options.env }
  const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['ignore', log, log] })
  closeSync(log)
  live.add(child)
  child.once('exit', () => live.delete(child))
  const origin = `http://127.0.0.1:${port}`
  const proc = `/proc/${child.pid!}`
  const target = {
    name,
    origin,
    /** The process: one, as each target runs (the service with WORKERS=1). */
    pid: child.pid!,
    /** User and system CPU seconds so far: utime and stime, in ticks of 1/100 s, fields 14 and 15 of stat (proc(5)). */
    cpuSeconds: (): number => {
      const stat = read(`${proc}/stat`)
      const [utime, stime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 13)
      return (Number(utime ?? 0) + Number(stime ?? 0)) / 100
    },
    /** Peak RSS in bytes since the last resetPeakRss(). */
    peakRss: (): number => Number(/^VmHWM:\s+(\d+) kB$/m.exec(read(`${proc}/status`))?.[1] ?? 0) * 1024,
    // Writing 5 to clear_refs resets VmHWM (proc(5)): each workload gets its own peak.
    resetPeakRss: (): void => { try { writeFileSync(`${proc}/clear_refs`, '5') } catch {} },
    stop: async (): Promise<void> => { await stopChild(child) }
  }
  for (const deadline = Date.now() + 60_000; ;) {
    if (exited(child) || Date.now() > deadline) {
      await target.stop()
      const tail = read(options.logFile).split('\n').slice(-15).join('\n')
      throw new Error(`${name} did not start; its log ${options.logFile} ends:\n${tail}`)
    }
    const response = await fetch(`${origin}${options.readyPath}`, { signal: AbortSignal.timeout(2_000) })
      .catch(() => undefined)
    await response?.arrayBuffer()
    if (response?.status === 200) return target
    await sleep(50)
  }
}

/** A server the bench started, seen from /proc. */
export type Target = Awaited<ReturnType<typeof startProcess>>

/** The node arguments of `npm start` at `root`: the service runs as it ships. */
export function startArguments (root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  return scripts.start.split(/\s+/).slice(1)
}

/** `petstore seed` of `count` animals on `url` (dist/ of the tree at `root`): its seconds. */
function seed (root: string, url: string, count: number): number {
  const started = performance.now()
  run(root, process.execPath, [join(root, 'dist/cli/main.js'), 'seed', '--count', String(count), '--database-url', url])
  return (performance.now() - started) / 1000
}

// The service as shipped, every feature on; the rate limit counts every request and is never reached.
const SERVICE_ENV = { PETSTORE_API_KEYS: API_KEY, RATE_LIMIT: '1000000000', LOG_LEVEL: 'info', HOST: '127.0.0.1' }

/** A target: the service of the tree at `root` (this one by default) as shipped, `env` aside, or `peers/PEER.js`. */
export interface Recipe {
  name: string, sqlite: boolean, root?: string, peer?: string, env?: Record<string, string>, animals?: number
}

/** Builds (unless `reuse` finds dist/), seeds `animals` and exports them; then starts targets on copies or seeds. */
export async function prepare (work: string, animals: number, postgres: string | undefined, reuse = false) {
  if (!reuse || !existsSync(join(ROOT, 'dist/cli/main.js'))) {
    say('npm run build')
    run(ROOT, 'npm', ['run', '--silent', 'build'])
  }
  say(`petstore seed: ${animals} animals; petstore export for the peers`)
  const [seeded, animalsFile] = [join(work, 'seeded.db'), join(work, 'animals.jsonl')]
  seed(ROOT, `sqlite:${seeded}`, animals)
  const exported = run(ROOT, process.execPath, ['dist/cli/main.js', 'export', '--database-url', `sqlite:${seeded}`])
  writeFileSync(animalsFile, exported)
  let made = 0
  return async ({ name, sqlite, root = ROOT, peer, env, animals: size }: Recipe) => {
    const slug = `${++made}-${name.replace(/\W+/g, '-')}`
    const file = sqlite ? join(work, `${slug}.db`) : undefined
    const schema = file === undefined ? await createSchema(postgres!) : undefined
    const url = schema?.url ?? `sqlite:${file!}`
    let seconds = 0
    if (peer === undefined && root === ROOT && file !== undefined && size === undefined) copyFileSync(seeded, file)
    else if (peer === undefined) seconds = seed(root, url, size ?? animals)
    const where = { cpus: SERVER_CPUS, logFile: join(work, `${slug}.log`), readyPath: '/readyz' }
    const peerEnv = { DATABASE_URL: url, BENCH_ANIMALS_FILE: animalsFile, BENCH_KEY: API_KEY }
    const service = { ...SERVICE_ENV, WORKERS: '1', DATABASE_URL: url, METRICS_PORT: String(await freePort()), ...env }
    const start = async (): Promise<Target> => {
      const target = await startProcess(name, peer === undefined
        ? { args: startArguments(root), env: service, cwd: root, ...where }
        : { args: [`${BUILT}peers/${peer}.js`], env: peerEnv, cwd: ROOT, ...where })
      // Every table the planner reads has fresh statistics before the first request (a peer fills its own at start).
      await schema?.analyze()
      return target
    }
    // The target, how to start it again on the same data, its animals, its SQLite file, the seconds its seed took.
    return { target: await start(), start, animals: size ?? animals, file, seconds }
  }
}

export type Started = Awaited<ReturnType<Awaited<ReturnType<typeof prepare>>>>

/** A schema of its own at `adminUrl`, dropped at the end with all in it: a URL with it first in search_path. */
async function createSchema (adminUrl: string): Promise<{ url: string, analyze: () => Promise<void> }> {
  const schema = `bench_${randomBytes(6).toString('hex')}`
  const db = new pg.Pool({ connectionString: adminUrl, max: 1 })
  await db.query(`CREATE SCHEMA ${schema}`)
  atEnd(async () => {
    await db.query(`DROP SCHEMA ${schema} CASCADE`)
    await db.end()
  })
  const url = new URL(adminUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.href,
    analyze: async () => {
      const { rows } = await db.query(`SELECT tablename FROM pg_tables WHERE schemaname = '${schema}'`)
      for (const { tablename } of rows as Array<{ tablename: string }>) await db.query(`ANALYZE ${schema}.${tablename}`)
    }
  }
}

/** `count` cursors over the deeper half of 1..`animals`, from the `Link`s of a walk: only the service makes them. */
export async function deepCursors (origin: string, animals: number, count: number): Promise<string[]> {
  // Pages as small as gives `count` cursors in the deeper half, at most the largest page (100).
  const limit = Math.min(100, Math.max(1, Math.floor(animals / 2 / count)))
  const cursors: string[] = []
  let url = `${origin}/v1/pets?limit=${limit}`
  // Up to 100 from the end, so each page of the workload is full.
  for (let seen = limit; seen <= animals - 100; seen += limit) {
    const response = await fetch(url, { headers: { authorization: `Bearer ${API_KEY}` } })
    await response.arrayBuffer()
    const next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1]
    if (next === undefined) throw new Error(`GET ${url}: ${response.status}, no next page`)
    url = next
    if (seen >= animals / 2) cursors.push(new URL(next).searchParams.get('cursor')!)
  }
  return Array.from({ length: count }, (_, i) => cursors[Math.floor(i * cursors.length / count)]!)
}
