/**
 * The sweep of expired Idempotency-Keys, in batches: each batch is one short
 * statement, and requests and creates are served between batches, so none waits
 * on the sweep for longer than one batch.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Store } from '../store/store.js'
import { IDEMPOTENCY_TTL_MS } from './pets.js'

/** Rows deleted by one statement: a few milliseconds of the database's time. */
export const SWEEP_BATCH_SIZE = 1_000

/**
 * Deletes every key recorded before `olderThan` (default: expired now), batch by batch.
 * @param onBatch told the rows each batch deleted, as it goes
 * @returns how many keys were deleted in all
 * @example const deleted = await sweepIdempotencyKeys(store, { onBatch: (rows) => counter.inc(rows) })
 */
export async function sweepIdempotencyKeys (store: Store, { olderThan = new Date(Date.now() - IDEMPOTENCY_TTL_MS), onBatch }: {
  olderThan?: Date
  onBatch?: (deleted: number) => void
} = {}): Promise<number> {
  let total = 0
  for (;;) {
    const deleted = await store.deleteIdempotencyKeys(olderThan, SWEEP_BATCH_SIZE)
    total += deleted
    onBatch?.(deleted)
    if (deleted < SWEEP_BATCH_SIZE) return total
    // A full turn of the event loop: the requests and creates that arrived meanwhile go first.
    await nextTurn()
  }
}
