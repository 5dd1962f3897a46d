/**
 * Runs the real CLI (`node --import tsx src/cli/main.ts …`) as a child process,
 * in a pipe or, through script(1), on a pseudo-terminal.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  input?: string
  /** Written to stdin, which is then left open: a writer that has not finished. */
  inputLeftOpen?: string
  /** Kills the CLI (SIGTERM) after this long; `code` is then null. */
  timeoutMs?: number
  env?: Record<string, string>
  /** A file descriptor stdout writes to instead of a pipe (`/dev/full`, to fill the disk). */
  stdout?: number
}

/** @example const { code, stdout } = await runCli(['keys', 'list', '--database-url', url]) */
export async function runCli (args: string[], options: CliOptions = {}): Promise<CliResult> {
  return await collect('node', ['--import', 'tsx', 'src/cli/main.ts', ...args], options)
}

/** The CLI with stdout and stderr on a terminal (both arrive in `stdout`, as a terminal shows them). */
export async function runCliOnTerminal (args: string[]): Promise<CliResult> {
  return await collect('script', ['-qec', shellCommand(args), '/dev/null'], {})
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
  const child = spawn('script', ['-qfec', `echo "pid $$"; exec ${shellCommand(args)}`, '/dev/null'], { cwd: ROOT, env: process.env, stdio: ['pipe', 'pipe', 'pipe'] })
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

/**
 * The CLI writing into a pipe nobody reads any more (`… | true`): its writes fail with EPIPE.
 * @example const { code, stderr } = await runCliIntoClosedPipe(['export', '--database-url', url])
 */
export async function runCliIntoClosedPipe (args: string[]): Promise<CliResult> {
  return await collect('bash', ['-c', `${shellCommand(args)} | true; exit "\${PIPESTATUS[0]}"`], {})
}

/**
 * A bash command line in which `petstore` runs the CLI: for what only a shell gives, such as
 * `<(…)` or a pipe (the stdin of a process Node spawns is a socket, not a pipe).
 * @example const { code } = await runCliInBash(`cat animals.jsonl | petstore import /dev/stdin --database-url ${url}`)
 */
export async function runCliInBash (commandLine: string): Promise<CliResult> {
  return await collect('bash', ['-c', `petstore () { ${shellCommand([])} "$@"; }\n${commandLine}`], {})
}

/** The CLI as one shell command, each argument quoted. */
function shellCommand (args: string[]): string {
  return ['node', '--import', 'tsx', 'src/cli/main.ts', ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ')
}

async function collect (file: string, args: string[], options: CliOptions): Promise<CliResult> {
  // No metrics listener unless a test asks: the default port would be shared by every run at once.
  const child = spawn(file, args, { cwd: ROOT, env: { ...process.env, METRICS_PORT: '0', ...options.env }, stdio: ['pipe', options.stdout ?? 'pipe', 'pipe'], timeout: options.timeoutMs })
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  if (options.inputLeftOpen === undefined) {
    child.stdin!.end(options.input)
  } else {
    child.stdin!.on('error', () => {}) // EPIPE once the CLI has stopped reading
    child.stdin!.write(options.inputLeftOpen)
  }
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}
