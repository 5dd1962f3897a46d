/**
 * An interrupted bench (Ctrl-C) must leave no server behind, not even one still
 * starting: stopEveryProcess stops what startProcess has spawned.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, describe, it } from 'node:test'
import { startProcess, stopEveryProcess } from '../../bench/targets.js'

/** The pid of the process whose command line holds `marker`, if one runs. */
function pidWith (marker: string): number | undefined {
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) return Number(name)
    } catch {}
  }
  return undefined
}

describe('bench: stopEveryProcess', { skip: process.platform === 'linux' ? false : 'reads /proc (Linux)' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-stop-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('stops a process that is still starting, and its start fails', async () => {
    const marker = `never-ready-${randomUUID()}`
    // A server that never listens: its start waits for a /readyz that never answers.
    const starting = startProcess('a server that never listens', { cpus: undefined, logFile: join(dir, 'log') }, () => ({
      args: ['-e', `setInterval(() => {}, 1000) // ${marker}`], env: {}, cwd: dir, readyPath: '/readyz'
    }))
    const failed = assert.rejects(starting)
    let pid: number | undefined
    for (let i = 0; i < 100 && pid === undefined; i++) {
      await sleep(50)
      pid = pidWith(marker)
    }
    assert.ok(pid !== undefined, 'the process was started')
    await stopEveryProcess()
    assert.equal(pidWith(marker), undefined, 'no process is left')
    await failed
  })
})
