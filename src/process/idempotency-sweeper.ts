/**
 * The hourly sweep of expired Idempotency-Keys in a serving process, reported to whoever
 * counts it (the metrics); a failed sweep is logged and tried again the next hour.
 */
import type { FastifyBaseLogger } from 'fastify'
import { sweepIdempotencyKeys } from '../domain/idempotency-sweep.js'
import type { Store } from '../store/store.js'

const SWEEP_INTERVAL_MS = 60 * 60 * 1000

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
