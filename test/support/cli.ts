/**
 * Runs the real `petstore` CLI from source in a child process.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:net'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))
const TSX = import.meta.resolve('tsx')

export interface CliOptions {
  env?: Record<string, string>
  cwd?: string
  /** Runs it as this user (and group of the same number): root may start it as nobody. */
  uid?: number
}

/** Spawns `petstore ARGS…`; stdout and stderr are collected as text. */
export function spawnCli (args: string[], options: CliOptions = {}): ChildProcess & { output: { stdout: string, stderr: string } } {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
    cwd: options.cwd,
    uid: options.uid,
    gid: options.uid,
    // No metrics listener unless a test asks: the default port would be shared by every run at once.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', METRICS_PORT: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe']
  }) as ChildProcess & { output: { stdout: string, stderr: string } }
  child.output = { stdout: '', stderr: '' }
  child.stdout!.on('data', (chunk) => { child.output.stdout += String(chunk) })
  child.stderr!.on('data', (chunk) => { child.output.stderr += String(chunk) })
  return child
}

/** Runs `petstore ARGS…` to its end. */
export async function runCli (args: string[], options: CliOptions = {}): Promise<{ code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string }> {
  const child = spawnCli(args, options)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])))
  await new Promise((resolve) => setImmediate(resolve))
  return { code, signal, ...child.output }
}

/** A TCP port that was free a moment ago. */
export async function freePort (): Promise<number> {
  return (await freePorts(1))[0]!
}

/** `count` distinct free ports: their listeners are all open at once, so no two are the same port. */
export async function freePorts (count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, async () => await new Promise<Server>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })))
  const ports = servers.map((server) => (server.address() as { port: number }).port)
  await Promise.all(servers.map(async (server) => await new Promise((resolve) => server.close(resolve))))
  return ports
}

/** Polls until `url` answers 200, or fails after `timeoutMs`. */
export async function waitUntilUp (url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not come up within ${timeoutMs} ms`)
}

export interface CliProcess {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>
  /** Resolves once `count` log lines say "listening"; rejects if the process exits first. */
  listening: (count: number) => Promise<void>
}

/**
 * Starts `petstore ARGS…` and follows it: its output, its exit, its workers' "listening" lines.
 * @example const cli = startCli(['serve'], { PORT: String(await freePort()) }); await cli.listening(1)
 */
export function startCli (args: string[], env: Record<string, string>): CliProcess {
  const child = spawnCli(args, { env: { LOG_LEVEL: 'info', RATE_LIMIT: '0', ...env } })
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)))
  const listening = async (count: number): Promise<void> => {
    while ((child.output.stdout.match(/"msg":"listening"/g) ?? []).length < count) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`petstore exited before listening: ${child.output.stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { child, stdout: () => child.output.stdout, stderr: () => child.output.stderr, exited, listening }
}
