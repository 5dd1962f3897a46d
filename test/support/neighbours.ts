/**
 * A busy neighbour, as a shared machine has one: processes that spin on the CPU and writers that
 * fill large files and fsync them, started beside the service under test and stopped after.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// 64 MiB written, then fsync'd, over and over: the disk's queue stays full.
const WRITER = `const fs = require('node:fs')
const block = Buffer.alloc(1 << 20, 7)
for (;;) {
  const fd = fs.openSync(process.argv[1], 'w')
  for (let i = 0; i < 64; i++) fs.writeSync(fd, block)
  fs.fsyncSync(fd)
  fs.closeSync(fd)
}`

export interface Neighbours {
  stop: () => Promise<void>
}

/**
 * @example const neighbours = startNeighbours({ spinners: 4, writers: 2 }); …; await neighbours.stop()
 */
export function startNeighbours ({ spinners, writers }: { spinners: number, writers: number }): Neighbours {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-neighbour-'))
  const children: ChildProcess[] = [
    ...Array.from({ length: spinners }, () => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' })),
    ...Array.from({ length: writers }, (_, i) => spawn(process.execPath, ['-e', WRITER, join(dir, `file-${i}`)], { stdio: 'ignore' }))
  ]
  return {
    stop: async () => {
      await Promise.all(children.map(async (child) => await new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined)
        child.once('exit', resolve).kill('SIGKILL')
      })))
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
