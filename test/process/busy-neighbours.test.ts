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
import { TEST_KEY } from '../support/constants.js'
import { startNeighbours, type Neighbours } from '../support/neighbours.js'
import { startServerProcess, type ServerProcess } from '../support/process.js'
import { openRaw } from '../support/raw-http.js'
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

    // 500 connections opened first, then a list of 100 written on each in one go: the spike reaches
    // the service at once however slowly this process runs beside the spinners, and is well past
    // MAX_QUEUE_DELAY's 50 ms of its work however fast the machine runs at the time.
    it('still refuses a spike of its own: 500 lists of 100 at once', { timeout: 60_000 }, async () => {
      const connections = await Promise.all(Array.from({ length: 500 }, async () => await openRaw(server.origin)))
      for (const { write } of connections) write(`GET /v1/pets?limit=100 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`)
      const statuses: Record<number, number> = {}
      for (const { response } of connections) {
        const { status } = await response
        statuses[status] = (statuses[status] ?? 0) + 1
      }
      assert.deepEqual(Object.keys(statuses).sort(), ['200', '503'], JSON.stringify(statuses))
    })
  })
}
