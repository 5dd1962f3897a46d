/**
 * The event loop's thread as the kernel schedules it (src/process/loop-thread.ts), which the
 * admission stage reads to tell the loop's own work from its waits: a thread that spins is running
 * or waiting for a CPU all the while, one that sleeps hardly runs; and in a cgroup held to 20 ms of
 * each 100 ms (a Kubernetes CPU limit), a spinning thread waits out the quota's pauses.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { loopThreadTimes } from '../../src/process/loop-thread.js'
import { quotaGroup } from '../support/cpu-quota.js'
import { skippedFile } from '../support/helper.js'

const MODULE = fileURLToPath(new URL('../../src/process/loop-thread.js', import.meta.url))
// Ready once its module is loaded; in the group, its times over 0.8 s of spinning.
const CHILD = `const { loopThreadTimes } = await import(${JSON.stringify(MODULE)})
process.stdout.write('ready ')
await new Promise((resolve) => process.stdin.once('data', resolve))
const before = loopThreadTimes()
const started = performance.now()
for (let end = started + 800; performance.now() < end;);
const after = loopThreadTimes()
process.stdout.write(JSON.stringify({ ranMs: after.ranMs - before.ranMs, waitedMs: after.waitedMs - before.waitedMs, ms: performance.now() - started }))`

/** The thread's times over `work`, and the wall time it took. */
async function timesOver (work: () => Promise<void> | void): Promise<{ ranMs: number, waitedMs: number, ms: number }> {
  const before = loopThreadTimes()!
  const started = performance.now()
  await work()
  const after = loopThreadTimes()!
  return { ranMs: after.ranMs - before.ranMs, waitedMs: after.waitedMs - before.waitedMs, ms: performance.now() - started }
}

describe('the event loop\'s thread, as the kernel schedules it', () => {
  it('runs or waits for a CPU all the while it spins, and hardly runs while it sleeps', async () => {
    const spinning = await timesOver(() => { for (let end = performance.now() + 200; performance.now() < end;); })
    assert.ok(spinning.ranMs + spinning.waitedMs > 0.9 * spinning.ms, JSON.stringify(spinning))
    const sleeping = await timesOver(async () => { await sleep(200) })
    assert.ok(sleeping.ranMs < 0.25 * sleeping.ms, JSON.stringify(sleeping))
  })

  const group = quotaGroup(`petstore-test-loop-${process.pid}`, 100, 20)
  if (typeof group === 'string') {
    skippedFile(`CPU quota test skipped: ${group}`)
    return
  }

  it('waits out a CPU quota\'s pauses: spinning in a group held to 20 ms of each 100, it runs a fifth of the time', { timeout: 20_000 }, async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    try {
      while (!stdout.startsWith('ready ')) await once(child.stdout, 'data')
      group.add(child.pid!)
      child.stdin.end('go')
      await once(child, 'close')
    } finally {
      child.kill()
      group.remove()
    }
    const times = JSON.parse(stdout.slice('ready '.length)) as { ranMs: number, waitedMs: number, ms: number }
    assert.ok(times.ranMs < 0.3 * times.ms, JSON.stringify(times))
    assert.ok(times.waitedMs > 0.6 * times.ms, JSON.stringify(times))
  })
})
