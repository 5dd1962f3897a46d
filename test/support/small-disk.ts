/**
 * A small tmpfs mounted at a new folder, for what only a full or read-only disk shows.
 * Needs root; where mounting is refused, the caller prints one skip line.
 */
import { execFileSync } from 'node:child_process'
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export type SmallDisk = { dir: string, unmount: () => void } | { refused: string }

/** @example const disk = mountSmallDisk('1m'); if ('refused' in disk) console.log(`skipped: ${disk.refused}`) */
export function mountSmallDisk (size: string, { readOnly = false } = {}): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}${readOnly ? ',ro' : ''}`, 'tmpfs', dir], { stdio: 'pipe' })
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    return { refused: String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim().split('\n')[0]! }
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir])
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Appends to `path` until the disk is full. */
export function fillDisk (path: string): void {
  const chunk = Buffer.alloc(16 * 1024)
  for (;;) {
    try {
      appendFileSync(path, chunk)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') return
      throw err
    }
  }
}
