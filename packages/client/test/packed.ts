/**
 * The client package as it is published: `npm pack` (which runs its `prepare` build)
 * into a temporary directory, for tests that install or serve the tarball.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

export const run = promisify(execFile)

export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))

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
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir, ...QUIET], { cwd: PACKAGE_DIR })
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string, files: Array<{ path: string }> }>
  return { dir, tarball: join(dir, packed!.filename), files: packed!.files.map((file) => file.path) }
}
