/**
 * Admission: a request behind a key that the service cannot serve in time is refused at once,
 * 503 `unavailable` with Retry-After and the Error body, before its key is looked up, its body
 * read or the database asked: a refusal judges the service's state, never the request. The
 * state is how long requests wait, in either queue a request meets: for the CPU (how far the
 * event loop runs behind its timers) and for a database connection (how long the oldest call
 * has waited for one, src/store/slots.ts). Past MAX_QUEUE_DELAY in either, new requests are
 * refused until the wait falls back; those admitted are served. A refusal is sent, not thrown:
 * no error is logged for it, and it costs a small share of a served request (docs/performance.md).
 */
import { performance } from 'node:perf_hooks'
import type { onRequestHookHandler } from 'fastify'
import { MESSAGES } from '../schemas/messages.js'
import type { ConnectionWaits } from '../store/store.js'
import { HttpError } from './errors.js'

/** Why a request was refused: the event loop behind, calls waiting for a connection, a call that waited past POOL_WAIT, or MAX_QUEUE_DELAY=0. */
export const REFUSAL_REASONS = ['event_loop', 'connection_queue', 'pool_wait', 'forced'] as const
export type RefusalReason = typeof REFUSAL_REASONS[number]

/** A refused caller comes back after this, with the client's jitter on top (packages/client). */
export const REFUSAL_RETRY_AFTER_SECONDS = 1

/** The refusal's answer, made once: the admission stage and the pool's bound (error-handler.ts) send it. */
export const REFUSAL = new HttpError('unavailable', MESSAGES.overloaded(REFUSAL_RETRY_AFTER_SECONDS), { 'retry-after': String(REFUSAL_RETRY_AFTER_SECONDS) })
const REFUSAL_BODY = JSON.stringify(REFUSAL.toBody())

// Often enough that a stall shows within a few milliseconds, at a few hundred wake-ups a second.
const TICK_MS = 5

/** How far the event loop runs behind: one timer of its own, and how late it is. */
class LoopDelay {
  #due = performance.now() + TICK_MS
  #lastLateMs = 0
  readonly #timer = setInterval(() => {
    const now = performance.now()
    this.#lastLateMs = now - this.#due
    this.#due = now + TICK_MS
  }, TICK_MS).unref()

  /** The later of how late the timer last ran, and how overdue it is now (a long turn of the loop, still going). */
  behindMs (): number {
    return Math.max(this.#lastLateMs, performance.now() - this.#due)
  }

  stop (): void {
    clearInterval(this.#timer)
  }
}

export interface Admission {
  /** The onRequest hook: refuses, or lets the request go on. */
  check: onRequestHookHandler
  stop: () => void
}

/**
 * @param maxDelayMs MAX_QUEUE_DELAY: 0 refuses every request behind a key
 * @example const admission = admitUnlessBehind(50, store.waits); app.addHook('onRequest', admission.check)
 */
export function admitUnlessBehind (maxDelayMs: number, waits: ConnectionWaits): Admission {
  const loop = new LoopDelay()
  const refusalOf = (): RefusalReason | undefined => {
    if (maxDelayMs === 0) return 'forced'
    if (loop.behindMs() > maxDelayMs) return 'event_loop'
    if (waits.oldestMs() > maxDelayMs) return 'connection_queue'
    return undefined
  }
  return {
    check: (request, reply, done) => {
      // Requests behind a key alone: /healthz, /readyz, the document and the docs page are never refused for load.
      if (request.state.presented === undefined) return done()
      const reason = refusalOf()
      if (reason === undefined) return done()
      request.state.refused = reason
      reply.code(REFUSAL.status).headers(REFUSAL.headers).type('application/json; charset=utf-8').send(REFUSAL_BODY)
    },
    stop: () => { loop.stop() }
  }
}
