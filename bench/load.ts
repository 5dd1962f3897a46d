/**
 * The load: a second process over loopback, wrk (with a Lua script) when it is
 * installed, else autocannon (bench/autocannon-load.ts). Optionally pinned to
 * its own core. Both report the same figures.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeCommand } from './targets.js'

const WRK = '/usr/bin/wrk'
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const REQUEST_TIMEOUT_S = 10

/** What every request of a workload looks like. */
export interface LoadSpec {
  method: 'GET' | 'POST'
  /** The path, or the prefix to which a random id is appended. */
  path: string
  headers: Record<string, string>
  body?: string
  /** Appends a random id from 1 to this to `path` for each request (a fixed seed). */
  randomIdMax?: number
  /** Picks one of these paths at random for each request (a fixed seed), instead of `path`. */
  paths?: string[]
}

export interface LoadResult {
  requests: number
  seconds: number
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  /** Responses with a status of 400 or more (how wrk counts them), or outside 2xx (autocannon). */
  non2xx: number
  /** Connect, read, write errors and timeouts. */
  socketErrors: number
}

export interface LoadTool {
  name: 'wrk' | 'autocannon'
  version: string
}

export interface LoadOptions {
  tool: LoadTool
  origin: string
  connections: number
  seconds: number
  /** Cores for taskset, or undefined. */
  cpus: string | undefined
  /** Where the Lua script is written. */
  workDir: string
}

/**
 * wrk when it is installed (unless autocannon is asked for), else autocannon.
 * @example detectLoadTool(undefined) // { name: 'wrk', version: 'debian/4.1.0-3+b2' }
 */
export function detectLoadTool (wanted: 'wrk' | 'autocannon' | undefined): LoadTool {
  if (wanted !== 'autocannon' && existsSync(WRK)) {
    const banner = spawnSync(WRK, ['-v'], { encoding: 'utf8' })
    const version = /^wrk (\S+)/.exec(`${banner.stdout}${banner.stderr}`)?.[1] ?? 'unknown'
    return { name: 'wrk', version }
  }
  if (wanted === 'wrk') throw new Error(`--load wrk: ${WRK} is not installed`)
  const manifest = join(ROOT, 'node_modules/autocannon/package.json')
  return { name: 'autocannon', version: (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version }
}

/** A Lua string literal: JSON's escapes for ASCII text are also Lua's. */
function lua (text: string): string {
  return JSON.stringify(text)
}

/**
 * The wrk script for a workload. `done()` prints one parseable line; each thread
 * seeds its own generator from its number, so a run is repeatable.
 */
export function wrkScript (spec: LoadSpec): string {
  const lines = [`wrk.method = ${lua(spec.method)}`]
  for (const [name, value] of Object.entries(spec.headers)) lines.push(`wrk.headers[${lua(name)}] = ${lua(value)}`)
  if (spec.body !== undefined) lines.push(`wrk.body = ${lua(spec.body)}`)
  if (spec.randomIdMax !== undefined || spec.paths !== undefined) {
    lines.push(
      'local threads = 0',
      'function setup(thread) threads = threads + 1; thread:set("number", threads) end',
      'function init(args) math.randomseed(1000 + number) end'
    )
  }
  if (spec.paths !== undefined) {
    lines.push(`local paths = { ${spec.paths.map(lua).join(', ')} }`)
    lines.push('function request() return wrk.format(nil, paths[math.random(#paths)]) end')
  } else if (spec.randomIdMax !== undefined) {
    lines.push(`function request() return wrk.format(nil, ${lua(spec.path)} .. math.random(${spec.randomIdMax})) end`)
  }
  lines.push(
    'function done(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("WRK_RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration,',
    '    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))',
    'end'
  )
  return `${lines.join('\n')}\n`
}

interface Finished { code: number | null, stdout: string, stderr: string }

/** Runs a command; stops it with SIGINT after `stopAfterMs` when given (wrk then reports what it measured). */
async function run (command: string, args: string[], stopAfterMs?: number): Promise<Finished> {
  // From the repository's root, where `--import tsx` resolves.
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const timer = stopAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), stopAfterMs)
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  })
  clearTimeout(timer)
  return { code, stdout, stderr }
}

async function runWrk (spec: LoadSpec, options: LoadOptions): Promise<LoadResult> {
  const script = join(options.workDir, 'load.lua')
  writeFileSync(script, wrkScript(spec))
  // wrk takes whole seconds: a fractional duration runs a second longer and is stopped on time.
  const whole = Number.isInteger(options.seconds)
  const threads = options.cpus === undefined ? 2 : options.cpus.split(',').length
  const args = [
    WRK, `-t${Math.min(threads, options.connections)}`, `-c${options.connections}`, `-d${Math.ceil(options.seconds) + (whole ? 0 : 1)}s`,
    `--timeout=${REQUEST_TIMEOUT_S}s`, '-s', script, `${options.origin}${spec.path}`
  ]
  const [command, commandArgs] = options.cpus === undefined ? [WRK, args.slice(1)] : ['taskset', ['-c', options.cpus, ...args]]
  const finished = await run(command, commandArgs, whole ? undefined : options.seconds * 1000)
  const match = /^WRK_RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/m.exec(finished.stdout)
  if (match === null) throw new Error(`wrk gave no result (exit ${finished.code}): ${finished.stderr || finished.stdout}`)
  const [requests, durationUs, p50Us, p99Us, non2xx, socketErrors] = match.slice(1).map(Number) as [number, number, number, number, number, number]
  return { requests, seconds: durationUs / 1e6, reqPerSec: requests / (durationUs / 1e6), p50Ms: p50Us / 1000, p99Ms: p99Us / 1000, non2xx, socketErrors }
}

async function runAutocannon (spec: LoadSpec, options: LoadOptions): Promise<LoadResult> {
  const runner = fileURLToPath(new URL('./autocannon-load.ts', import.meta.url))
  const job = JSON.stringify({ spec, origin: options.origin, connections: options.connections, seconds: options.seconds })
  const [command, args] = nodeCommand(['--import', 'tsx', runner, job], options.cpus)
  const finished = await run(command, args)
  const line = finished.stdout.split('\n').find((text) => text.startsWith('{'))
  if (finished.code !== 0 || line === undefined) throw new Error(`autocannon gave no result (exit ${finished.code}): ${finished.stderr}`)
  return JSON.parse(line) as LoadResult
}

/**
 * One result for loads run together against several instances: requests and
 * rates summed, errors summed, and the worse of their latencies (a client of the
 * slower instance sees it).
 * @example combineResults([a, b]).reqPerSec // a.reqPerSec + b.reqPerSec
 */
export function combineResults (results: LoadResult[]): LoadResult {
  const sum = (figure: (result: LoadResult) => number): number => results.reduce((total, result) => total + figure(result), 0)
  const worst = (figure: (result: LoadResult) => number): number => Math.max(...results.map(figure))
  return {
    requests: sum((result) => result.requests),
    seconds: worst((result) => result.seconds),
    reqPerSec: sum((result) => result.reqPerSec),
    p50Ms: worst((result) => result.p50Ms),
    p99Ms: worst((result) => result.p99Ms),
    non2xx: sum((result) => result.non2xx),
    socketErrors: sum((result) => result.socketErrors)
  }
}

/**
 * Puts the workload on the target for `seconds` and returns what was measured.
 * @example const result = await runLoad({ method: 'GET', path: '/v1/pets?limit=20', headers }, options)
 */
export async function runLoad (spec: LoadSpec, options: LoadOptions): Promise<LoadResult> {
  return options.tool.name === 'wrk' ? await runWrk(spec, options) : await runAutocannon(spec, options)
}
