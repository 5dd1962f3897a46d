/**
 * The service under a CPU quota of 100 ms periods, as a Kubernetes CPU limit runs a pod: held to
 * 20 ms of each period, it stops for 80 ms once the 20 are spent, and the requests that arrive
 * meanwhile wait that long. The admission stage takes that pause for what it is, a wait for a CPU
 * (src/process/loop-thread.ts): a load the service keeps up with is served whole, none of it refused for load.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { quotaGroup, type QuotaGroup } from '../support/cpu-quota.js'
import { AUTH, skippedFile } from '../support/helper.js'
import { startServerProcess, type ServerProcess } from '../support/process.js'

/** `clients` keep-alive loops of lists for `ms`: the count of each status. */
async function listFor (origin: string, clients: number, ms: number): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {}
  const end = performance.now() + ms
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < end) {
      const response = await fetch(`${origin}/v1/pets?limit=20`, { headers: AUTH })
      await response.arrayBuffer()
      statuses[response.status] = (statuses[response.status] ?? 0) + 1
    }
  }))
  return statuses
}

describe('petstore serve under a CPU quota of 100 ms periods', () => {
  const group = quotaGroup(`petstore-test-limit-${process.pid}`, 100, 20)
  if (typeof group === 'string') {
    skippedFile(`CPU quota test skipped: ${group}`)
    return
  }
  let dir: string
  let server: ServerProcess
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-quota-'))
    server = await startServerProcess(`sqlite:${join(dir, 'pets.db')}`)
    await listFor(server.origin, 4, 1_000) // compiled by the JIT outside the quota, as a server up a while is
    group.add(server.child.pid!)
  })
  after(async () => {
    server.child.kill('SIGKILL')
    await server.exited
    const emptied = group as QuotaGroup
    emptied.remove()
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves every request of a closed loop that spends its quota, though each pause is longer than MAX_QUEUE_DELAY', { timeout: 30_000 }, async () => {
    const throttled = group.throttled()
    const statuses = await listFor(server.origin, 8, 2_000)
    assert.ok(group.throttled() - throttled >= 10, `held back in ${group.throttled() - throttled} periods of 20`)
    assert.deepEqual(Object.keys(statuses), ['200'], JSON.stringify(statuses) + server.output().slice(-3000))
  })
})
