import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { SWEEP_BATCH_SIZE, startIdempotencySweeper } from '../../src/process/idempotency-sweeper.js'
import { backends, get, post, startTestServer, type TestServer } from '../support/helper.js'
import { query } from '../support/database.js'

// Fifty batches: enough for requests to be answered between them, on every backend.
const EXPIRED = 50 * SWEEP_BATCH_SIZE
const DAY_MS = 24 * 60 * 60 * 1000

/** One statement, so one transaction: `EXPIRED` keys two days old, and one fresh key. */
function insertKeysSql (backend: string): string {
  const numbers = backend === 'sqlite'
    ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${EXPIRED}) SELECT 'sweep', 'k' || i, 'f', 1, ? FROM n`
    : `SELECT 'sweep', 'k' || i, 'f', 1, ? FROM generate_series(1, ${EXPIRED}) AS n(i)`
  return `INSERT INTO idempotency_keys (scope, key, fingerprint, pet_id, created_at) ${numbers}`
}

for (const backend of backends()) {
  describe(`${backend.name}: the sweep of ${EXPIRED} expired idempotency keys`, { skip: backend.skip }, () => {
    let server: TestServer
    const batches: Array<{ rows: number, at: number }> = []
    const stalls: number[] = []
    let answeredDuringSweep = 0
    let statuses = new Set<number>()
    let swept = 0
    let sweepStarted = 0
    let sweepMs = 0

    before(async () => {
      server = await startTestServer({ backend: backend.name })
      await query(server.database.url, insertKeysSql(backend.name), [Date.now() - 2 * DAY_MS])
      assert.equal((await post(server, '/pets', { name: 'Fresh', categoryId: 1 }, { 'idempotency-key': 'fresh' })).status, 201)

      const sweeper = startIdempotencySweeper(server.store, server.sweeps, server.app.log)
      sweeper.stop()
      // The batches as they go: the store's own method, watched.
      const deleteBatch = server.store.deleteIdempotencyKeys.bind(server.store)
      server.store.deleteIdempotencyKeys = async (olderThan, limit) => {
        const rows = await deleteBatch(olderThan, limit)
        batches.push({ rows, at: performance.now() })
        if (batches.length === 1) sweepStarted = performance.now()
        return rows
      }
      const sweep = { running: true }
      const sweepDone = sweeper.sweep().then((rows) => { swept = rows; sweep.running = false })
      // Two callers, each sending a list then a create as soon as the last is answered, while the sweep runs.
      const statusesSeen: number[] = []
      await Promise.all([0, 1].map(async (lane) => {
        for (let i = 0; sweep.running; i++) {
          const started = performance.now()
          const response = i % 2 === 0 ? await get(server, '/pets?limit=5') : await post(server, '/pets', { name: `during ${lane}.${i}`, categoryId: 1 })
          await response.arrayBuffer()
          stalls.push(performance.now() - started)
          statusesSeen.push(response.status)
          if (sweep.running) answeredDuringSweep++
        }
      }))
      await sweepDone
      sweepMs = performance.now() - sweepStarted
      statuses = new Set(statusesSeen)
    })
    after(async () => { await server.close() })

    it('deletes every expired key, batch by batch, each batch at most the batch size', (t) => {
      assert.equal(swept, EXPIRED)
      assert.ok(batches.every((batch) => batch.rows <= SWEEP_BATCH_SIZE), 'no batch above the batch size')
      assert.ok(batches.length >= EXPIRED / SWEEP_BATCH_SIZE, `${batches.length} batches`)
      const gaps = batches.slice(1).map((batch, i) => batch.at - batches[i]!.at)
      t.diagnostic(`${batches.length} batches of at most ${SWEEP_BATCH_SIZE}; longest time between two batches ${Math.max(...gaps).toFixed(1)} ms; the sweep took ${Math.round(sweepMs)} ms`)
    })

    it('answers requests and creates between batches, before the sweep ends', (t) => {
      assert.ok(answeredDuringSweep > 0, 'requests answered while the sweep ran')
      assert.deepEqual([...statuses].sort(), [200, 201])
      const sorted = [...stalls].sort((a, b) => a - b)
      t.diagnostic(`${answeredDuringSweep} requests answered during the sweep; longest ${sorted.at(-1)!.toFixed(1)} ms, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms`)
    })

    it('keeps the keys not yet expired', async () => {
      const replay = await post(server, '/pets', { name: 'Fresh', categoryId: 1 }, { 'idempotency-key': 'fresh' })
      assert.equal(replay.headers.get('idempotent-replayed'), 'true')
    })

    it('counts the sweep and the keys it deleted in the metrics', async () => {
      const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
      assert.match(text, /^petstore_idempotency_sweeps_total 1$/m)
      assert.match(text, new RegExp(`^petstore_idempotency_keys_swept_total ${EXPIRED}$`, 'm'))
    })
  })
}
