/**
 * Runs the real CLI (`petstore …` from the sources) as a child process, with its
 * output collected, and finds free ports for it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'

export interface CliProcess {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>
  /** Resolves once `count` log lines say "listening"; rejects if the process exits first. */
  listening: (count: number) => Promise<void>
}

/** @example const cli = runCli(['serve'], { PORT: String(await freePort()) }) */
export function runCli (args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', RATE_LIMIT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (chunk: Buffer) => { out += String(chunk) })
  child.stderr!.on('data', (chunk: Buffer) => { err += String(chunk) })
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)))
  const listening = async (count: number): Promise<void> => {
    while ((out.match(/"msg":"listening"/g) ?? []).length < count) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`petstore exited before listening: ${err}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { child, stdout: () => out, stderr: () => err, exited, listening }
}

/** A TCP port nobody listens on right now. */
export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
