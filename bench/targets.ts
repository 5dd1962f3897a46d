/**
 * The servers under load, each a child process started afresh for every run: the service as users
 * run it (`npm start`'s node arguments on dist/, filled by `petstore seed`), and the peers
 * (bench/peers/, compiled to plain JavaScript). Reads their CPU time and peak RSS from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { basename, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

export interface Target {
  name: string
  origin: string
  /** The process and its children. */
  pids: () => string[]
  /** User and system CPU seconds of the process and its children so far. */
  cpuSeconds: () => number
  /** Peak RSS in bytes since the last resetPeakRss(), summed over the process and its children. */
  peakRss: () => number
  resetPeakRss: () => void
  stop: () => Promise<void>
}

/** The bearer key every target accepts and every request carries. */
export const API_KEY = 'bench-key-0123456789abcdef'

/**
 * The service with its admission stage off, wherever a closed loop measures it: each refusal would be
 * followed at once by the next request, and its cheap answer count as a request served.
 */
export const ADMISSION_OFF = { MAX_QUEUE_DELAY: 'off' }

const live = new Set<ChildProcess>()

/** Where the kernel's range for listen(0) and outgoing connections begins (ip_local_port_range). */
const EPHEMERAL_FROM = Number(read('/proc/sys/net/ipv4/ip_local_port_range').split(/\s+/)[0]) || 32_768
const givenPorts = new Set<number>()

/**
 * A port that binds now, below the kernel's range: one found free inside it could be taken by another
 * program's listen(0) or connection (the tests beside the smoke run) before the child binds it.
 */
async function freePort (): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (EPHEMERAL_FROM - 10_000))
    if (givenPorts.has(port)) continue
    const server = createServer()
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => { resolve(false) })
      server.listen(port, '127.0.0.1', () => { resolve(true) })
    })
    if (!bound) continue
    await new Promise((resolve) => server.close(resolve))
    givenPorts.add(port)
    return port
  }
}

/** A process and its descendants (the service's cluster workers), from /proc. */
function processTree (pid: number): string[] {
  const parents = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map((name) => [name, statFields(name)[1]] as const)
  const pids = [String(pid)]
  for (let i = 0; i < pids.length; i++) for (const [child, parent] of parents) if (parent === pids[i]) pids.push(child)
  return pids
}

/** The fields of /proc/PID/stat after the parenthesised name: state, ppid, … */
function statFields (pid: string): string[] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return []
  }
}

/** User and system CPU seconds of these processes so far. */
export function cpuSecondsOf (pids: string[]): number {
  return pids.reduce((sum, pid) => { const fields = statFields(pid); return sum + Number(fields[11] ?? 0) + Number(fields[12] ?? 0) }, 0) / 100
}

function read (path: string): string {
  try { return readFileSync(path, 'utf8') } catch { return '' }
}

async function stopChild (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  if (await Promise.race([exited.then(() => true), sleep(15_000, false, { ref: false })])) return
  child.kill('SIGKILL')
  await exited
}

/** Stops every process the bench started that still runs (Ctrl-C, a failure). */
export async function stopEveryProcess (): Promise<void> {
  await Promise.all([...live].map(stopChild))
}

/**
 * Starts `node ARGS` on a free port (given as PORT, or by `args(port)`), pinned to `cpus`,
 * its output to `logFile`, and resolves once `GET readyPath` answers 200.
 */
export async function startProcess (name: string, options: { args: (port: number) => string[], env: Record<string, string>, cwd: string, cpus: string | undefined, logFile: string, readyPath: string }): Promise<Target> {
  const port = await freePort()
  const log = openSync(options.logFile, 'w')
  const args = options.args(port)
  const [command, commandArgs] = options.cpus === undefined ? [process.execPath, args] : ['taskset', ['-c', options.cpus, process.execPath, ...args]]
  // Only what it is told: no setting of the shell that runs the bench (DATABASE_URL, REDIS_URL, OTEL_*) leaks in.
  const child = spawn(command, commandArgs, { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', PORT: String(port), ...options.env }, stdio: ['ignore', log, log] })
  closeSync(log)
  live.add(child)
  child.once('exit', () => live.delete(child))
  const origin = `http://127.0.0.1:${port}`
  const tree = (): string[] => processTree(child.pid!)
  const target: Target = {
    name,
    origin,
    pids: tree,
    cpuSeconds: () => cpuSecondsOf(tree()),
    peakRss: () => tree().reduce((sum, pid) => sum + Number(/^VmHWM:\s+(\d+) kB$/m.exec(read(`/proc/${pid}/status`))?.[1] ?? 0) * 1024, 0),
    // Writing 5 to clear_refs resets VmHWM (proc(5)): each workload gets its own peak.
    resetPeakRss: () => { for (const pid of tree()) try { writeFileSync(`/proc/${pid}/clear_refs`, '5') } catch {} },
    stop: async () => { await stopChild(child) }
  }
  for (const deadline = Date.now() + 60_000; ;) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await target.stop()
      throw new Error(`${name} did not start; its log ${options.logFile} ends:\n${read(options.logFile).split('\n').slice(-15).join('\n')}`)
    }
    const status = await fetch(`${origin}${options.readyPath}`, { signal: AbortSignal.timeout(2_000) }).then(async (response) => { await response.arrayBuffer(); return response.status }, () => 0)
    if (status === 200) return target
    await sleep(50)
  }
}

/** `node dist/cli/main.js ARGS` of the tree at `root`, its stdout to a file if given; throws with its stderr when it fails. */
export async function petstore (root: string, args: string[], stdout?: string): Promise<void> {
  const out = stdout === undefined ? 'ignore' : openSync(stdout, 'w')
  const child = spawn(process.execPath, [join(root, 'dist/cli/main.js'), ...args], { cwd: root, stdio: ['ignore', out, 'pipe'] })
  if (typeof out === 'number') closeSync(out)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const code = await new Promise((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  if (code !== 0) throw new Error(`petstore ${args.join(' ')} failed: ${stderr}`)
}

/** The node arguments of `npm start` at `root`: the service runs as it ships. */
export function startArguments (root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  return scripts.start.split(/\s+/).slice(1)
}

/** The service of the tree at `root` on `databaseUrl`, every feature on, the rate limit counting but never reached; `env` adds or overrides settings. */
export async function startService (name: string, root: string, databaseUrl: string, apiKey: string, placement: { cpus: string | undefined, logFile: string }, env: Record<string, string> = {}): Promise<Target> {
  const metricsPort = await freePort()
  return await startProcess(name, {
    args: () => startArguments(root),
    env: { DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: apiKey, RATE_LIMIT: '1000000000', LOG_LEVEL: 'info', HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), WORKERS: '1', ...env },
    cwd: root,
    readyPath: '/readyz',
    ...placement
  })
}

/** What the bench starts beside the service, under bench/: the peers and the load processes. */
const SCRIPTS = ['peers/fastify', 'peers/bare', 'peers/storage', 'autocannon', 'open-loop'] as const

/**
 * Compiles SCRIPTS to plain JavaScript side by side in `dir` (beside a link to node_modules), so
 * they run on bare node as the service runs from dist/, with no TypeScript loader in memory.
 */
export async function compileScripts (root: string, dir: string): Promise<void> {
  const { default: ts } = await import('typescript')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n')
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  for (const file of SCRIPTS) {
    const source = readFileSync(join(root, 'bench', `${file}.ts`), 'utf8')
    writeFileSync(join(dir, `${basename(file)}.js`), ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText)
  }
}

/**
 * A schema of its own on the PostgreSQL server at `adminUrl`, and the URL that puts it first in
 * search_path; `drop()` removes it with everything in it.
 */
export async function createSchema (adminUrl: string): Promise<{ url: string, analyze: () => Promise<void>, drop: () => Promise<void> }> {
  const schema = `bench_${randomBytes(6).toString('hex')}`
  const sql = async (text: string): Promise<pg.QueryResult> => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try { return await client.query(text) } finally { await client.end() }
  }
  await sql(`CREATE SCHEMA ${schema}`)
  const url = new URL(adminUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.href,
    analyze: async () => {
      const { rows } = await sql(`SELECT tablename FROM pg_tables WHERE schemaname = '${schema}'`)
      for (const { tablename } of rows as Array<{ tablename: string }>) await sql(`ANALYZE ${schema}.${tablename}`)
    },
    drop: async () => { await sql(`DROP SCHEMA ${schema} CASCADE`) }
  }
}

/**
 * `count` cursors of pages spread over the deeper half of animals 1..`animals`, each taken from
 * the `Link` of a page on a walk through the list: only the service makes its cursors.
 */
export async function deepCursors (origin: string, apiKey: string, animals: number, count: number): Promise<string[]> {
  // Pages as small as gives `count` cursors in the deeper half, at most the largest page (100).
  const limit = Math.min(100, Math.max(1, Math.floor(animals / 2 / count)))
  const cursors: string[] = []
  let cursor = ''
  // Up to 100 from the end, so each page of the workload is full.
  for (let seen = limit; seen <= animals - 100; seen += limit) {
    const response = await fetch(`${origin}/v1/pets?limit=${limit}${cursor}`, { headers: { authorization: `Bearer ${apiKey}` } })
    await response.arrayBuffer()
    const next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1]
    if (response.status !== 200 || next === undefined) throw new Error(`GET /v1/pets after ${seen - limit} animals: ${response.status}, no next page`)
    cursor = `&cursor=${new URL(next).searchParams.get('cursor')!}`
    if (seen >= animals / 2) cursors.push(cursor.slice('&cursor='.length))
  }
  return Array.from({ length: count }, (_, i) => cursors[Math.floor(i * cursors.length / count)]!)
}
