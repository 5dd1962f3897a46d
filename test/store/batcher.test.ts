import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { Batcher } from '../../src/store/batcher.js'
import { Slots } from '../../src/store/slots.js'

/** A commit that records each batch it is given and doubles every item. */
function recordingCommit (fail: (batch: number[]) => boolean = () => false) {
  const batches: number[][] = []
  const commit = async (items: number[]): Promise<number[]> => {
    batches.push(items)
    await nextTurn()
    if (fail(items)) throw new Error(`batch ${batches.length} failed`)
    return items.map((item) => item * 2)
  }
  return { batches, commit }
}

// SQLite's policy but for the batch size: one writer, gathering a turn.
const gathering = (maxBatch: number) => ({ maxBatch, gatherTurn: true })

describe('Batcher, as SQLite batches', () => {
  it('commits the requests of one turn of the event loop together, each answered with its own outcome', async () => {
    const { batches, commit } = recordingCommit()
    const group = new Batcher(commit, gathering(256), new Slots(1, 1_000))
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map((item) => group.submit(item)))
    assert.deepEqual(outcomes, [2, 4, 6, 8, 10])
    assert.deepEqual(batches, [[1, 2, 3, 4, 5]])
  })

  it('never puts more than the batch size in one commit, and keeps the order', async () => {
    const { batches, commit } = recordingCommit()
    const group = new Batcher(commit, gathering(3), new Slots(1, 1_000))
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((item) => group.submit(item)))
    assert.deepEqual(batches, [[1, 2, 3], [4, 5, 6], [7]])
  })

  it('gathers what arrives during a commit into the next one', async () => {
    const { batches, commit } = recordingCommit()
    const group = new Batcher(commit, gathering(256), new Slots(1, 1_000))
    const first = group.submit(1)
    await nextTurn() // the first commit is under way
    const later = [2, 3, 4].map((item) => group.submit(item))
    await Promise.all([first, ...later])
    assert.deepEqual(batches, [[1], [2, 3, 4]])
  })

  it('fails only the requests of a failed batch; the next batch commits', async () => {
    const { batches, commit } = recordingCommit((batch) => batch.includes(1))
    const group = new Batcher(commit, gathering(2), new Slots(1, 1_000))
    const settled = await Promise.allSettled([1, 2, 3, 4].map((item) => group.submit(item)))
    assert.deepEqual(batches, [[1, 2], [3, 4]])
    assert.deepEqual(settled.map((result) => result.status), ['rejected', 'rejected', 'fulfilled', 'fulfilled'])
    assert.match(String((settled[0] as PromiseRejectedResult).reason), /batch 1 failed/)
  })
})

describe('Batcher, as PostgreSQL batches', () => {
  it('commits at once while a slot is free, and gathers only what waits for one', async () => {
    const { batches, commit } = recordingCommit()
    const pool = new Batcher(commit, { maxBatch: 2, gatherTurn: false }, new Slots(2, 1_000))
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map((item) => pool.submit(item)))
    assert.deepEqual(outcomes, [2, 4, 6, 8, 10])
    assert.deepEqual(batches, [[1], [2], [3, 4], [5]])
  })
})
