/**
 * The real `petstore`, built in dist/ (`npm test` builds it first), as a child process: a command
 * run to its end (in a pipe, on a terminal, in bash), or spawned for a test that acts while it runs.
 * Every child gets the same small environment (PATH, HOME, no metrics listener) plus what the test
 * gives, so nothing leaks in from the runner and files run side by side. The service started and
 * followed as a process is in process.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './constants.js'
import { ownChild } from './programs.js'

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
  void ownChild(child)
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
