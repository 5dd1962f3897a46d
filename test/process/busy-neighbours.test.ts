/**
 * The service as shipped (the admission stage on, MAX_QUEUE_DELAY's default) beside a busy
 * neighbour: four processes spinning on the two cores and two writers fsyncing large files. Its
 * event loop then waits for a CPU and its creates wait for slow commits, yet no queue of its own
 * grows: a client's creates and lists are all served. A spike of its own is still refused.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { AUTH, JSON_AUTH, backends, createTestDatabase, type TestDatabase } from '../support/helper.js'
import { startNeighbours, type Neighbours } from '../support/neighbours.js'
import { startServerProcess, type ServerProcess } from '../support/process.js'
import { tallyStatuses } from '../support/status-tally.js'

for (const backend of backends('sqlite', 'postgres')) {
  describe(`${backend.name}: petstore serve beside a busy neighbour`, () => {
    let database: TestDatabase
    let server: ServerProcess
    let neighbours: Neighbours
    before(async () => {
      database = await createTestDatabase(backend.name)
      server = await startServerProcess(database.url)
      neighbours = startNeighbours({ spinners: 4, writers: 2 })
      await sleep(2_000) // the writers' first files filled: the disk's queue is full
    })
    after(async () => {
      await neighbours.stop()
      server.child.kill('SIGKILL')
      await server.exited
      await database.drop()
    })

    it('serves every one of 120 creates sent 8 at a time, then 100 lists sent 4 at a time', { timeout: 60_000 }, async () => {
      const created = await tallyStatuses(120, 8, async (i) => await fetch(`${server.origin}/v1/pets`, {
        method: 'POST',
        headers: JSON_AUTH,
        body: JSON.stringify({ name: `neighbour ${i}`, categoryId: 1 })
      }))
      const listed = await tallyStatuses(100, 4, async () => await fetch(`${server.origin}/v1/pets?limit=20`, { headers: AUTH }))
      assert.deepEqual({ created, listed }, { created: { 201: 120 }, listed: { 200: 100 } }, server.output().slice(-3000))
    })

    // 500: within Node's listen backlog (511), so that the kernel takes every connection at once.
    it('still refuses a spike of its own: 500 lists at once', { timeout: 60_000 }, async () => {
      const statuses = await tallyStatuses(500, 500, async () => await fetch(`${server.origin}/v1/pets?limit=20`, { headers: AUTH }))
      assert.deepEqual(Object.keys(statuses).sort(), ['200', '503'], JSON.stringify(statuses))
    })
  })
}
