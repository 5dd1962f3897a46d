/**
 * npm, run the way the bench needs it: in a given project tree, its output
 * kept off the report (stdout ignored), its errors shown (stderr inherited).
 */
import { spawn, type ChildProcess } from 'node:child_process'

// npm runs not finished yet: an interrupted bench stops them with its servers.
const running = new Set<ChildProcess>()

/**
 * Runs `npm ARGS` in `cwd` and waits for it.
 * @throws Error `npm run build failed (exit 2)` when it exits non-zero
 * @example await runNpm(root, ['run', '--silent', 'build'])
 */
export async function runNpm (cwd: string, args: string[]): Promise<void> {
  const child = spawn('npm', args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] })
  running.add(child)
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  }).finally(() => running.delete(child))
  const command = args.filter((arg) => !arg.startsWith('--')).join(' ')
  if (code !== 0) throw new Error(`npm ${command} failed (exit ${code})`)
}

/**
 * Stops every npm run still going (npm passes the SIGTERM on to its script) and waits for it to end.
 * @example process.once('SIGINT', () => { stopNpm().finally(() => process.exit(130)) })
 */
export async function stopNpm (): Promise<void> {
  await Promise.all([...running].map(async (child) => {
    const closed = new Promise((resolve) => child.once('close', resolve))
    child.kill('SIGTERM')
    await closed
  }))
}
