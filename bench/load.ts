/**
 * The workloads and the load that carries them: wrk when it is installed (a Lua script
 * draws the ids), else autocannon (autocannon.ts), each in a process of its own, pinned when asked.
 */
import { spawn } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const WORKLOADS = ['list', 'list-status', 'get', 'create'] as const
export const SCALE_WORKLOADS = ['list', 'deep-list', 'get'] as const
export type Workload = typeof WORKLOADS[number] | typeof SCALE_WORKLOADS[number]

export const REQUESTS: Record<Workload, string> = {
  list: '`GET /v1/pets?limit=20`',
  'list-status': '`GET /v1/pets?limit=20&status=available`',
  get: '`GET /v1/pets/{id}`, id random in 1..N',
  create: '`POST /v1/pets` `{"name":"Rex","categoryId":3}`, durable',
  'deep-list': '`GET /v1/pets?limit=20&cursor=…`, cursors at random positions in the deeper half'
}

/** What every request of a workload looks like: a path, or one drawn from `paths`, or `path` + a random id up to `idMax`. */
export interface LoadSpec {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  idMax?: number
  paths?: string[]
}

export interface LoadResult { requests: number, reqPerSec: number, p50Ms: number, p99Ms: number, failed: number }

const WRK = '/usr/bin/wrk'
export const LOAD_TOOL = existsSync(WRK) ? 'wrk' : 'autocannon'

/** The workload's requests for a database of animals 1..`animals`; `cursors` for the deep list. */
export function workloadSpec (workload: Workload, apiKey: string, animals: number, cursors: string[] = []): LoadSpec {
  const headers = { authorization: `Bearer ${apiKey}` }
  switch (workload) {
    case 'list': return { method: 'GET', path: '/v1/pets?limit=20', headers }
    case 'list-status': return { method: 'GET', path: '/v1/pets?limit=20&status=available', headers }
    case 'get': return { method: 'GET', path: '/v1/pets/', idMax: animals, headers }
    case 'create': return { method: 'POST', path: '/v1/pets', headers: { ...headers, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":3}' }
    case 'deep-list': return { method: 'GET', path: '/v1/pets?limit=20', paths: cursors.map((cursor) => `/v1/pets?limit=20&cursor=${cursor}`), headers }
  }
}

/** The wrk script: each thread seeds its own generator, and done() prints one parseable line. */
function wrkScript (spec: LoadSpec): string {
  const lua = (text: string): string => JSON.stringify(text)
  const lines = [`wrk.method = ${lua(spec.method)}`, ...Object.entries(spec.headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`)]
  if (spec.body !== undefined) lines.push(`wrk.body = ${lua(spec.body)}`)
  lines.push('local n = 0', 'function setup(thread) n = n + 1; thread:set("number", n) end', 'function init(args) math.randomseed(1000 + number) end')
  if (spec.paths !== undefined) lines.push(`local paths = { ${spec.paths.map(lua).join(', ')} }`, 'function request() return wrk.format(nil, paths[math.random(#paths)]) end')
  else if (spec.idMax !== undefined) lines.push(`function request() return wrk.format(nil, ${lua(spec.path)} .. math.random(${spec.idMax})) end`)
  lines.push('function done(s, latency, r)', '  local e = s.errors',
    '  io.write(string.format("WRK %d %d %d %d %d\\n", s.requests, s.duration, latency:percentile(50), latency:percentile(99), e.status + e.connect + e.read + e.write + e.timeout))', 'end')
  return `${lines.join('\n')}\n`
}

/** Runs a command to its end, or stops it with SIGINT after `stopAfterMs` (wrk then reports what it measured). */
async function run (command: string, args: string[], stopAfterMs?: number): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const timer = stopAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), stopAfterMs)
  await new Promise((resolve, reject) => { child.once('error', reject); child.once('close', resolve) })
  clearTimeout(timer)
  return stdout
}

/**
 * Puts the workload on `origin` for `seconds` with `connections`, from cores `cpus` when given.
 * `scripts` is where compileScripts put the compiled autocannon.js, and where wrk's script goes.
 * @example await runLoad(workloadSpec('get', key, 10_000), { origin, connections: 50, seconds: 10, cpus: '1', scripts: '/tmp/bench/scripts' })
 */
export async function runLoad (spec: LoadSpec, options: { origin: string, connections: number, seconds: number, cpus: string | undefined, scripts: string }): Promise<LoadResult> {
  const pin = (args: string[]): [string, string[]] => options.cpus === undefined ? [args[0]!, args.slice(1)] : ['taskset', ['-c', options.cpus, ...args]]
  if (LOAD_TOOL === 'autocannon') {
    const [command, args] = pin([process.execPath, join(options.scripts, 'autocannon.js'), JSON.stringify({ spec, ...options })])
    return JSON.parse(await run(command, args)) as LoadResult
  }
  const script = join(options.scripts, 'load.lua')
  writeFileSync(script, wrkScript(spec))
  // wrk takes whole seconds: a shorter run is stopped on time.
  const whole = Number.isInteger(options.seconds)
  const threads = options.cpus?.split(',').length ?? 2
  const [command, args] = pin([WRK, `-t${threads}`, `-c${options.connections}`, `-d${Math.ceil(options.seconds) + (whole ? 0 : 1)}s`, '--timeout=10s', '-s', script, `${options.origin}${spec.path}`])
  const match = /^WRK (\d+) (\d+) (\d+) (\d+) (\d+)$/m.exec(await run(command, args, whole ? undefined : options.seconds * 1000))
  if (match === null) throw new Error('wrk gave no result')
  const [requests, durationUs, p50Us, p99Us, failed] = match.slice(1).map(Number) as [number, number, number, number, number]
  return { requests, reqPerSec: requests / (durationUs / 1e6), p50Ms: p50Us / 1000, p99Ms: p99Us / 1000, failed }
}
