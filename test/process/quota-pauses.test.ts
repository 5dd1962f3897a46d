/**
 * The pause of a CPU quota, as the admission stage reads it (src/process/quota-pauses.ts): a process
 * that spins in a cgroup of its own, held to 20 ms of each 100 ms, is paused 80 ms at a time.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { quotaGroup } from '../support/cpu-quota.js'
import { skippedFile } from '../support/helper.js'

const MODULE = fileURLToPath(new URL('../../src/process/quota-pauses.js', import.meta.url))
// Ready once its module is loaded; in the group, what it reads first, then after 0.8 s of spinning.
const CHILD = `const { QuotaPauses } = await import(${JSON.stringify(MODULE)})
process.stdout.write('ready ')
await new Promise((resolve) => process.stdin.once('data', resolve))
const pauses = new QuotaPauses(5)
const first = pauses.now(performance.now())
for (let end = performance.now() + 800; performance.now() < end;) pauses.now(performance.now())
process.stdout.write(JSON.stringify([first, pauses.now(performance.now())]))`

describe('the pause of a CPU quota', () => {
  const group = quotaGroup(`petstore-test-pauses-${process.pid}`, 100, 20)
  if (typeof group === 'string') {
    skippedFile(`CPU quota test skipped: ${group}`)
    return
  }

  it('is nothing until the quota holds the process back, then a pause of the period less the quota (80 ms of every 100), running a fifth of the time', { timeout: 20_000 }, async () => {
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
    assert.deepEqual(JSON.parse(stdout.slice('ready '.length)), [{ pauseMs: 0, share: 1 }, { pauseMs: 80, share: 0.2 }])
  })

  it('is nothing without a quota', async () => {
    const { QuotaPauses } = await import('../../src/process/quota-pauses.js')
    assert.deepEqual(new QuotaPauses(5).now(performance.now()), { pauseMs: 0, share: 1 })
  })
})
