/**
 * Admission: a request behind a key that the service cannot serve in time is refused at once,
 * 503 `unavailable` with Retry-After and the Error body, before its key is looked up, its body
 * read or the database asked: a refusal judges the service's state, never the request. The
 * state is how long requests wait, in either queue a request meets: for the CPU (how far the
 * event loop runs behind its timers) and for a database connection (how long the oldest call
 * has waited for one, src/store/slots.ts). Past MAX_QUEUE_DELAY in either, beyond the pause a CPU
 * quota makes the process take (read by src/process/quota-pauses.ts), new requests are refused until the wait
 * falls back; those admitted are served. A refusal is sent, not thrown: no error is logged for it
 * (docs/performance.md#overload has its cost).
 */
import { performance } from 'node:perf_hooks'
import type { onRequestHookHandler } from 'fastify'
import { MESSAGES } from '../../schemas/messages.js'
import type { ConnectionWaits } from '../../store/store.js'
import { HttpError } from '../errors.js'

/** What a CPU quota does to the process now: the pause it makes (ms), and the share of the time it runs. */
export interface QuotaNow { pauseMs: number, share: number }
/** The process's CPU quota, as its cgroup sets it (src/process/quota-pauses.ts). */
export interface CpuQuota { now: (now: number) => QuotaNow }
/** What no quota does: no pause, the whole of the time. */
export const UNLIMITED: QuotaNow = { pauseMs: 0, share: 1 }
export const NO_CPU_QUOTA: CpuQuota = { now: () => UNLIMITED }

/** Why a request was refused: the event loop behind, calls waiting for a connection, a call that waited past POOL_WAIT, or MAX_QUEUE_DELAY=0. */
export const REFUSAL_REASONS = ['event_loop', 'connection_queue', 'pool_wait', 'forced'] as const
export type RefusalReason = typeof REFUSAL_REASONS[number]

/** A refused caller comes back after this, with the client's jitter on top (packages/client). */
const REFUSAL_RETRY_AFTER_SECONDS = 1

/** The refusal's answer, made once: the admission stage and the pool's bound (error-handler.ts) send it. */
export const REFUSAL = new HttpError('unavailable', MESSAGES.overloaded(REFUSAL_RETRY_AFTER_SECONDS), { 'retry-after': String(REFUSAL_RETRY_AFTER_SECONDS) })
const REFUSAL_BODY = JSON.stringify(REFUSAL.toBody())

/**
 * How far the event loop runs behind: a timer of its own, due every `tickMs` while requests come
 * (none while the service idles: its wake-ups would spend a CPU quota), and how late it is.
 */
class LoopDelay {
  readonly #tickMs: number
  #timer: NodeJS.Timeout | undefined
  #due = 0
  #lastLateMs = 0
  #asked = false

  constructor (tickMs: number) {
    this.#tickMs = tickMs
  }

  /** The later of how late the timer last ran, and how overdue it is now (a long turn of the loop, still going). */
  behindMs (now: number): number {
    this.#asked = true
    if (this.#timer === undefined) this.#arm(now)
    return Math.max(this.#lastLateMs, now - this.#due)
  }

  stop (): void {
    clearTimeout(this.#timer)
  }

  #arm (now: number): void {
    this.#due = now + this.#tickMs
    this.#timer = setTimeout(this.#ran, this.#tickMs).unref()
  }

  readonly #ran = (): void => {
    const now = performance.now()
    this.#lastLateMs = now - this.#due
    this.#timer = undefined
    // Asked since: requests are coming, the timer goes on; else it rests until the next request.
    if (this.#asked) this.#arm(now)
    else this.#lastLateMs = 0
    this.#asked = false
  }
}

export interface Admission {
  /** The onRequest hook: refuses, or lets the request go on. */
  check: onRequestHookHandler
  stop: () => void
}

/**
 * @param maxDelayMs MAX_QUEUE_DELAY: 0 refuses every request behind a key
 * @example const admission = admitUnlessBehind(50, store.waits, new QuotaPauses()); app.addHook('onRequest', admission.check)
 */
export function admitUnlessBehind (maxDelayMs: number, waits: ConnectionWaits, quota: CpuQuota): Admission {
  // Four looks within the delay it bounds: a long turn of the loop shows at most a quarter of it late.
  const tickMs = Math.max(1, maxDelayMs / 4)
  const loop = new LoopDelay(tickMs)
  const refusalOf = (): RefusalReason | undefined => {
    if (maxDelayMs === 0) return 'forced'
    const now = performance.now()
    const lateMs = loop.behindMs(now)
    const waitedMs = waits.oldestMs()
    if (lateMs <= maxDelayMs && waitedMs <= maxDelayMs) return undefined
    // Behind, yet maybe by a CPU quota's pause alone, which the next burst makes up.
    const { pauseMs, share } = quota.now(now)
    if (lateMs - pauseMs > maxDelayMs) return 'event_loop'
    // A connection's holders run the quota's share of the time: a wait stands for that share of their work.
    if (waitedMs * share > maxDelayMs) return 'connection_queue'
    return undefined
  }
  return {
    check: (request, reply, done) => {
      // Requests behind a key alone: /healthz, /readyz, /readyz/process, the document and the docs page are never refused for load.
      if (request.state.presented === undefined) return done()
      const reason = refusalOf()
      if (reason === undefined) return done()
      request.state.refused = reason
      reply.code(REFUSAL.status).headers(REFUSAL.headers).type('application/json; charset=utf-8').send(REFUSAL_BODY)
    },
    stop: () => { loop.stop() }
  }
}
