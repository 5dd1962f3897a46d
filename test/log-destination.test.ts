import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { after, describe, it } from 'node:test'
import { TurnWriter } from '../src/log-destination.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

describe('the log destination', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-log-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('writes the lines of a turn together after it, in order', async () => {
    const path = join(dir, 'turn.log')
    const fd = openSync(path, 'w')
    try {
      const writer = new TurnWriter(fd)
      for (const line of ['one\n', 'two\n', 'three\n']) writer.write(line)
      assert.equal(readFileSync(path, 'utf8'), '', 'nothing is written during the turn')
      await nextTurn()
      assert.equal(readFileSync(path, 'utf8'), 'one\ntwo\nthree\n')
    } finally {
      closeSync(fd)
    }
  })

  it('writes what is pending when the process exits', () => {
    const script = `import { TurnWriter } from './src/log-destination.ts'
      const writer = new TurnWriter(1)
      for (let i = 0; i < 1000; i++) writer.write('line ' + i + '\\n')
      process.exit(0)`
    const { stdout, status } = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })
    assert.equal(status, 0)
    assert.equal(stdout, Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join(''))
  })

  it('keeps what a full non-blocking pipe refused, every byte, and writes it once the pipe drains', async () => {
    const fifo = join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    // Read-write and non-blocking: opening needs no reader, and a full pipe answers EAGAIN.
    const writeEnd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK)
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      const writer = new TurnWriter(writeEnd)
      // Over 256 KiB of lines with two- and four-byte characters, more than a pipe holds.
      const lines = Array.from({ length: 4000 }, (_, i) => `{"n":${i},"name":"Réné 🐕 ${'x'.repeat(50)}"}\n`)
      for (const line of lines) writer.write(line)
      const expected = Buffer.from(lines.join(''))
      const received: Buffer[] = []
      let size = 0
      const chunk = Buffer.alloc(65_536)
      for (let waits = 0; size < expected.length && waits < 500; waits++) {
        await sleep(5)
        for (;;) {
          let read = 0
          try {
            read = readSync(readEnd, chunk)
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err
          }
          if (read === 0) break
          received.push(Buffer.from(chunk.subarray(0, read)))
          size += read
        }
      }
      assert.ok(Buffer.concat(received).equals(expected), 'the bytes read are the lines written, whole and in order')
    } finally {
      closeSync(writeEnd)
      closeSync(readEnd)
    }
  })

  it('drops a block the fd refuses for good, and goes on without throwing', async () => {
    const path = join(dir, 'read-only.log')
    closeSync(openSync(path, 'w'))
    const fd = openSync(path, 'r')
    try {
      const writer = new TurnWriter(fd)
      writer.write('refused\n')
      await nextTurn()
      writer.write('refused too\n')
      await nextTurn()
      assert.equal(readFileSync(path, 'utf8'), '')
    } finally {
      closeSync(fd)
    }
  })
})
