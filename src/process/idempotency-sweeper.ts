/**
 * The hourly sweep of expired Idempotency-Keys in a serving process, in batches: each batch is
 * one short statement, and requests and creates are served between batches, so none waits on
 * the sweep for longer than one batch. A failed sweep is logged and tried again the next hour.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { IDEMPOTENCY_TTL_MS } from '../domain/pets.js'
import type { Store } from '../store/store.js'

const SWEEP_INTERVAL_MS = 60 * 60 * 1000
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

/** Told of each batch of keys deleted, and of each sweep that completed. */
export interface SweepCounts {
  onBatch: (deleted: number) => void
  onSweep: () => void
}

export interface IdempotencySweeper {
  /** Sweeps now; resolves with the keys deleted (0 after a failure, which is logged). */
  sweep: () => Promise<number>
  stop: () => void
}

/**
 * @example const sweeper = startIdempotencySweeper(store, { onBatch: (n) => swept.inc(n), onSweep: () => sweeps.inc() }, app.log)
 */
export function startIdempotencySweeper (store: Store, counts: SweepCounts, logger: FastifyBaseLogger, intervalMs = SWEEP_INTERVAL_MS): IdempotencySweeper {
  const sweep = async (): Promise<number> => {
    try {
      const deleted = await sweepIdempotencyKeys(store, { onBatch: counts.onBatch })
      counts.onSweep()
      return deleted
    } catch (err) {
      logger.warn({ err }, 'idempotency key sweep failed')
      return 0
    }
  }
  const timer = setInterval(() => { void sweep() }, intervalMs).unref()
  return { sweep, stop: () => clearInterval(timer) }
}
