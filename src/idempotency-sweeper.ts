/**
 * The hourly sweep of expired Idempotency-Keys in a serving process, counted in
 * its metrics; a failed sweep is logged and tried again the next hour.
 */
import type { FastifyBaseLogger } from 'fastify'
import { sweepIdempotencyKeys } from './domain/idempotency-sweep.js'
import type { Metrics } from './http/plugins/metrics.js'
import type { Store } from './store/store.js'

const SWEEP_INTERVAL_MS = 60 * 60 * 1000

export interface IdempotencySweeper {
  /** Sweeps now; resolves with the keys deleted (0 after a failure, which is logged). */
  sweep: () => Promise<number>
  stop: () => void
}

/**
 * @example const sweeper = startIdempotencySweeper(store, app.metrics, app.log); sweeper.stop()
 */
export function startIdempotencySweeper (store: Store, metrics: Metrics, logger: FastifyBaseLogger, intervalMs = SWEEP_INTERVAL_MS): IdempotencySweeper {
  const sweep = async (): Promise<number> => {
    try {
      const deleted = await sweepIdempotencyKeys(store, { onBatch: (rows) => metrics.idempotencyKeysSwept.inc(rows) })
      metrics.idempotencySweeps.inc()
      return deleted
    } catch (err) {
      logger.warn({ err }, 'idempotency key sweep failed')
      return 0
    }
  }
  const timer = setInterval(() => { void sweep() }, intervalMs).unref()
  return { sweep, stop: () => clearInterval(timer) }
}
