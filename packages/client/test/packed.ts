/**
 * The client package as it is published: `npm pack` (which runs its `prepare` build)
 * into a temporary directory, for tests that install or serve the tarball.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { ROOT } from './server-support.js'

export const run = promisify(execFile)

export const PACKAGE_DIR = join(ROOT, 'packages/client')

/** npm's quiet flags: no audit, no funding notice, no update check. */
export const QUIET = ['--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error']

export interface Packed {
  /** A fresh temporary directory, the tarball in it. */
  dir: string
  tarball: string
  /** The files the tarball holds, as `npm pack` lists them. */
  files: string[]
}

/** @example const { dir, tarball } = await packClient() */
export async function packClient (): Promise<Packed> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-client-'))
  const { stdout } = await oneAtATime(async () => await run('npm', ['pack', '--json', '--pack-destination', dir, ...QUIET], { cwd: PACKAGE_DIR }))
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string, files: Array<{ path: string }> }>
  return { dir, tarball: join(dir, packed!.filename), files: packed!.files.map((file) => file.path) }
}

// The build npm pack runs writes the package's dist/: two test files packing at once would write it together.
const LOCK = join(PACKAGE_DIR, 'test-output', 'pack.lock')
/** A lock left by a killed run is taken over after this long (a pack takes a few seconds). */
const STALE_MS = 120_000

/** Runs `work` while holding LOCK, a directory: mkdir either makes it or fails, atomically. */
async function oneAtATime<T> (work: () => Promise<T>): Promise<T> {
  mkdirSync(join(LOCK, '..'), { recursive: true })
  for (;;) {
    try {
      mkdirSync(LOCK)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > STALE_MS) rmSync(LOCK, { recursive: true, force: true })
      } catch {}
      await sleep(100)
    }
  }
  try {
    return await work()
  } finally {
    rmSync(LOCK, { recursive: true, force: true })
  }
}
