/**
 * The real `petstore`, built in dist/ (`npm test` builds it first), as a child process: a command
 * run to its end (in a pipe, on a terminal, in bash), the service started and followed, and free
 * ports for it. Every child gets the same small environment (PATH, HOME, no metrics listener) plus what the test gives, so
 * nothing leaks in from the runner and files run side by side.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Where `npm test` runs the tests from: test/, src/ and the client's sources compiled, the same tree inside. */
const TEST_BUILD = '.test-build'
const ABOVE_SUPPORT = fileURLToPath(new URL('../..', import.meta.url))
/** The repository's root, whether this file runs from test/support/ or from TEST_BUILD: the CLI's working directory unless a test gives another. */
export const ROOT = basename(ABOVE_SUPPORT) === TEST_BUILD ? dirname(ABOVE_SUPPORT) : ABOVE_SUPPORT
/** The one API key every test server, in process or child, accepts. */
export const TEST_KEY = 'test-key-0123456789abcdef'

const MAIN = join(ROOT, 'dist/cli/main.js')
/** `petstore` itself, from any working directory: the built one, which starts in a fraction of tsx's time. */
const COMMAND = [process.execPath, MAIN]

let built = false
/** Throws unless dist/ holds a build newer than every file of src/: a stale build would test old code. */
function assertBuilt (): void {
  if (built) return
  let builtAt: number
  try {
    builtAt = statSync(MAIN).mtimeMs
  } catch {
    throw new Error('dist/cli/main.js is missing: run npm run build (npm test does)')
  }
  const src = join(ROOT, 'src')
  const newer = readdirSync(src, { recursive: true, encoding: 'utf8' }).find((file) => statSync(`${src}/${file}`).mtimeMs > builtAt)
  if (newer !== undefined) throw new Error(`src/${newer} is newer than dist/: run npm run build (npm test does)`)
  built = true
}

export interface CliOptions {
  env?: Record<string, string>
  /** ROOT unless given. */
  cwd?: string
  /** Runs it as this user (and group of the same number): root may start it as nobody. */
  uid?: number
  /** Written to stdin, which is then closed. */
  input?: string
  /** Written to stdin, which is then left open: a writer that has not finished. */
  inputLeftOpen?: string
  /** Kills the CLI (SIGTERM) after this long; `code` is then null. */
  timeoutMs?: number
  /** A file descriptor stdout writes to instead of a pipe (`/dev/full`, to fill the disk). */
  stdout?: number
}

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** The environment of every child: the runner's own (TEST_*, CI…) stays out. No metrics listener unless a test asks: the default port would be shared by every run at once. */
function childEnv (env: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', METRICS_PORT: '0', ...env }
}

export type CliChild = ChildProcess & { output: { stdout: string, stderr: string } }

/** Every child still running: a test that failed before stopping its own leaves none behind when its file ends. */
const running = new Set<ChildProcess>()
process.on('exit', () => { for (const child of running) child.kill('SIGKILL') })

/**
 * Spawns `petstore ARGS…` and returns at once; stdout and stderr are collected as text.
 * `stdin: 'pipe'` leaves its stdin open for the test to write.
 * @example const child = spawnCli(['seed', '--count', '1000000', '--database-url', url]); child.kill('SIGINT')
 */
export function spawnCli (args: string[], options: CliOptions & { stdin?: 'ignore' | 'pipe', detached?: boolean } = {}): CliChild {
  assertBuilt()
  const child = spawn(COMMAND[0]!, [...COMMAND.slice(1), ...args], {
    cwd: options.cwd ?? ROOT,
    uid: options.uid,
    gid: options.uid,
    detached: options.detached,
    timeout: options.timeoutMs,
    env: childEnv(options.env),
    stdio: [options.stdin ?? 'ignore', options.stdout ?? 'pipe', 'pipe']
  }) as CliChild
  running.add(child)
  child.once('exit', () => running.delete(child))
  child.output = { stdout: '', stderr: '' }
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { child.output.stdout += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { child.output.stderr += chunk })
  return child
}

/** @example const { code, stdout } = await runCli(['keys', 'list', '--database-url', url]) */
export async function runCli (args: string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, { ...options, stdin: 'pipe' })
  if (options.inputLeftOpen === undefined) {
    child.stdin!.end(options.input)
  } else {
    child.stdin!.on('error', () => {}) // EPIPE once the CLI has stopped reading
    child.stdin!.write(options.inputLeftOpen)
  }
  return await finished(child)
}

/** Resolves once `child` has exited and its output is read to the end. */
async function finished (child: CliChild): Promise<CliResult> {
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
  return { code, signal, ...child.output }
}

/** A child of `file ARGS…` (script, bash) in ROOT, run to its end. */
async function runOther (file: string, args: string[]): Promise<CliResult> {
  const child = spawn(file, args, { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] }) as CliChild
  child.output = { stdout: '', stderr: '' }
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { child.output.stdout += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { child.output.stderr += chunk })
  return await finished(child)
}

/** The CLI with stdout and stderr on a terminal (both arrive in `stdout`, as a terminal shows them). */
export async function runCliOnTerminal (args: string[]): Promise<CliResult> {
  return await runOther('script', ['-qec', shellCommand(args), '/dev/null'])
}

/**
 * The CLI writing into a pipe nobody reads any more (`… | true`): its writes fail with EPIPE.
 * @example const { code, stderr } = await runCliIntoClosedPipe(['export', '--database-url', url])
 */
export async function runCliIntoClosedPipe (args: string[]): Promise<CliResult> {
  return await runOther('bash', ['-c', `${shellCommand(args)} | true; exit "\${PIPESTATUS[0]}"`])
}

/**
 * A bash command line in which `petstore` runs the CLI: for what only a shell gives, such as
 * `<(…)` or a pipe (the stdin of a process Node spawns is a socket, not a pipe).
 * @example const { code } = await runCliInBash(`cat animals.jsonl | petstore import /dev/stdin --database-url ${url}`)
 */
export async function runCliInBash (commandLine: string): Promise<CliResult> {
  return await runOther('bash', ['-c', `petstore () { ${shellCommand([])} "$@"; }\n${commandLine}`])
}

/** The CLI as one shell command, each argument quoted. */
function shellCommand (args: string[]): string {
  assertBuilt()
  return [...COMMAND, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ')
}

/** The CLI started on a terminal, still running: what it showed so far, keys to type, its end. */
export interface TerminalCli {
  /** Everything the terminal showed so far, stdout and stderr alike. */
  readonly output: string
  /** The CLI's own process id (not script's). */
  readonly pid: Promise<number>
  /** Types on the terminal: '\x03' is Ctrl-C, which the terminal turns into SIGINT. */
  type: (keys: string) => void
  /** Resolves with the first match of `pattern` in the output. */
  waitFor: (pattern: RegExp) => Promise<RegExpExecArray>
  /** The exit code, once the CLI is done. */
  readonly exited: Promise<number | null>
}

/**
 * Starts the CLI on a pseudo-terminal (script(1)) and returns at once, for a test that acts
 * while it runs: types Ctrl-C, or signals its process.
 * @example const cli = startCliOnTerminal(['seed', '--count', '1000000']); await cli.waitFor(/animals/); cli.type('\x03')
 */
export function startCliOnTerminal (args: string[]): TerminalCli {
  // The shell prints its pid, then becomes the CLI (exec): that pid is the CLI's.
  const child = spawn('script', ['-qfec', `echo "pid $$"; exec ${shellCommand(args)}`, '/dev/null'], { cwd: ROOT, env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  const waiting = new Set<() => void>()
  const onData = (chunk: string): void => {
    output += chunk
    for (const check of waiting) check()
  }
  child.stdout.setEncoding('utf8').on('data', onData)
  child.stderr.setEncoding('utf8').on('data', onData)
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => {
    for (const check of waiting) check()
    resolve(code)
  }))
  const waitFor = async (pattern: RegExp): Promise<RegExpExecArray> => await new Promise((resolve, reject) => {
    const check = (): void => {
      const match = pattern.exec(output)
      if (match !== null) {
        waiting.delete(check)
        resolve(match)
      } else if (child.exitCode !== null) {
        waiting.delete(check)
        reject(new Error(`the CLI ended (${child.exitCode}) without showing ${String(pattern)}:\n${output}`))
      }
    }
    waiting.add(check)
    check()
  })
  return {
    get output () { return output },
    pid: waitFor(/^pid (\d+)/m).then((match) => Number(match[1])),
    type: (keys) => { child.stdin.write(keys) },
    waitFor,
    exited: exited.finally(() => child.stdin.end())
  }
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
  const child = spawnCli(args, { env: { LOG_LEVEL: 'info', RATE_LIMIT: '0', MAX_QUEUE_DELAY: 'off', ...env } })
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
export async function startServerProcess (databaseUrl: string, env: Record<string, string> = {}, { ownProcessGroup = false } = {}): Promise<ServerProcess> {
  const port = await freePort()
  const child = spawnCli(['serve'], {
    detached: ownProcessGroup,
    env: { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, PETSTORE_API_KEYS: TEST_KEY, RATE_LIMIT: '0', MAX_QUEUE_DELAY: 'off', LOG_LEVEL: 'warn', ...env }
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
