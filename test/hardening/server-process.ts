/**
 * The real service as a child process: `node --import tsx src/cli/main.ts serve`
 * on a free port, for what only a process can show (SIGKILL, SIGTERM).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { TEST_KEY } from '../helper.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface ServerProcess {
  origin: string
  child: ChildProcess
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>
  /** Everything the process wrote, for a failing assertion's message. */
  output: () => string
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Starts the service on `databaseUrl` and resolves once /healthz answers; in a process group
 * of its own when asked.
 * @example const server = await startServerProcess(database.url); server.child.kill('SIGKILL')
 */
export async function startServerProcess (databaseUrl: string, env: Record<string, string> = {}, { ownProcessGroup = false } = {}): Promise<ServerProcess> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    cwd: ROOT,
    // Its own process group, which a test signals as a whole (`kill -- -PGID`), as systemd does.
    detached: ownProcessGroup,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: TEST_KEY, RATE_LIMIT: '0', LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  const origin = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited at start: ${output}`)
    try {
      if ((await fetch(`${origin}/healthz`)).status === 200) break
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the service did not start within 30 s: ${output}`)
    }
    await sleep(50)
  }
  return { origin, child, exited, output: () => output }
}
