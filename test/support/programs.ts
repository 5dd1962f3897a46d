/**
 * Programs the tests start beside the service (HAProxy, nginx, Patroni, Chromium, the CLI):
 * whether one is installed here, and each child killed should the test file end first.
 */
import type { ChildProcess } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Why the program at `path` cannot run here (with the Debian package that has it), or false when it can.
 * @example const missing = programMissing('/usr/sbin/nginx', 'nginx-light'); if (missing !== false) skippedFile(`nginx tests skipped: ${missing}`)
 */
export function programMissing (path: string, debianPackage: string): string | false {
  try {
    accessSync(path, constants.X_OK)
    return false
  } catch {
    return `${path} is missing (apt-get install ${debianPackage})`
  }
}

/** Every child still running: a test that failed before stopping its own leaves none behind when its file ends. */
const running = new Set<ChildProcess>()
process.on('exit', () => { for (const child of running) child.kill('SIGKILL') })

/**
 * Kills `child` with SIGKILL if it still runs when this process exits; resolves when it exits.
 * @example const exited = ownChild(spawn(NGINX, ['-c', config]))
 */
export async function ownChild (child: ChildProcess): Promise<void> {
  running.add(child)
  await new Promise<void>((resolve) => child.once('exit', () => {
    running.delete(child)
    resolve()
  }))
}

/**
 * Sends `signal`, then SIGKILL if `child` still runs `graceMs` later; resolves once it has exited.
 * @example const exited = ownChild(child); …; await stopChild(child, exited, 'SIGQUIT')
 */
export async function stopChild (child: ChildProcess, exited: Promise<void>, signal: NodeJS.Signals, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill(signal)
  await Promise.race([exited, sleep(graceMs)])
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL')
    await exited
  }
}
