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

/**
 * The CLI writing into a pipe nobody reads any more (`… | true`): its writes fail with EPIPE.
 * @example const { code, stderr } = await runCliIntoClosedPipe(['export', '--database-url', url])
 */
export async function runCliIntoClosedPipe (args: string[]): Promise<CliResult> {
  return await collect('bash', ['-c', `${shellCommand(args)} | true; exit "\${PIPESTATUS[0]}"`], {})
}

/** The CLI as one shell command, each argument quoted. */
function shellCommand (args: string[]): string {
  return ['node', '--import', 'tsx', 'src/cli/main.ts', ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ')
}

async function collect (file: string, args: string[], options: CliOptions): Promise<CliResult> {
  const child = spawn(file, args, { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['pipe', options.stdout ?? 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  child.stdin!.end(options.input)
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}
