/**
 * The service as a process, for what only a process shows (signals, workers, start-up lines, the
 * metrics listener): `petstore serve` started and followed, free ports to give it, and a wait
 * until it answers. The child is the CLI's (cli.ts): the same environment, and killed when its
 * test file ends.
 */
import type { ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { spawnCli } from './cli.js'
import { TEST_KEY } from './constants.js'

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
  // RATE_LIMIT off: a test sends more than a minute's quota of requests on one key.
  const child = spawnCli(args, { env: { LOG_LEVEL: 'info', RATE_LIMIT: '0', ...env } })
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)))
  const listening = async (count: number): Promise<void> => {
    while ((child.output.stdout.match(/"msg":"listening"/g) ?? []).length < count) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`petstore exited before listening: ${child.output.stderr}`)
      await sleep(50)
    }
  }
  return { child, stdout: () => child.output.stdout, stderr: () => child.output.stderr, exited, listening }
}

export interface ServerProcess {
  origin: string
  child: ChildProcess
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>
  /** Everything the process wrote, stdout then stderr, for a failing assertion's message. */
  output: () => string
}

/**
 * `petstore serve` on `databaseUrl` and a free port, with the test key and no rate limit, for
 * what only a process can show (SIGKILL, SIGTERM); resolves once /healthz answers. In a process
 * group of its own when asked, which a test signals as a whole (`kill -- -PGID`), as systemd does.
 * @example const server = await startServerProcess(database.url); server.child.kill('SIGKILL')
 */
export async function startServerProcess (databaseUrl: string, env: Record<string, string> = {}, options: { ownProcessGroup?: boolean, port?: number } = {}): Promise<ServerProcess> {
  const { ownProcessGroup = false, port = await freePort() } = options
  const child = spawnCli(['serve'], {
    detached: ownProcessGroup,
    // RATE_LIMIT off: a test sends more than a minute's quota of requests on one key.
    env: { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: TEST_KEY, RATE_LIMIT: '0', LOG_LEVEL: 'warn', ...env }
  })
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  const output = (): string => child.output.stdout + child.output.stderr
  const origin = `http://127.0.0.1:${port}`
  try {
    await waitUntilUp(`${origin}/healthz`, 30_000, child)
  } catch (err) {
    child.kill('SIGKILL')
    throw new Error(`${(err as Error).message}: ${output()}`)
  }
  return { origin, child, exited, output }
}

/**
 * A TCP port the OS gave a moment ago (port 0), for a child that must be told its port.
 * @example const cli = startCli(['serve'], { PORT: String(await freePort()) })
 */
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

/** Polls until `url` answers 200, or fails after `timeoutMs` (or as soon as `child` exits). */
export async function waitUntilUp (url: string, timeoutMs = 30_000, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child !== undefined && (child.exitCode !== null || child.signalCode !== null)) throw new Error(`the service exited at start (${child.exitCode ?? child.signalCode})`)
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await sleep(child === undefined ? 100 : 50)
  }
  throw new Error(`${url} did not come up within ${timeoutMs} ms`)
}
