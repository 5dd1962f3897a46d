/**
 * Admission: a request behind a key that the service cannot serve in time is refused at once,
 * 503 `unavailable` with Retry-After and the Error body, before its key is looked up, its body
 * read or the database asked: a refusal judges the service's state, never the request. The
 * state is how long requests wait in a queue of the service's own, in either queue a request
 * meets: for the CPU (how far the event loop runs behind its timers for work of its own) and for
 * a database connection (how long the oldest call has waited for one, while more wait than a turn
 * of the connections serves: src/store/slots.ts). Past MAX_QUEUE_DELAY in either, new requests are refused until the wait
 * falls back; those admitted are served. A wait that refusing would not shorten is no reason: the
 * loop's thread waiting for a CPU (a busy neighbour, a CPU quota's pause), or a call next in line
 * for a slow connection (a slow disk). A refusal is sent, not thrown: no error is logged for it
 * (docs/performance.md#overload has its cost).
 */
import { performance } from 'node:perf_hooks'
import type { onRequestHookHandler } from 'fastify'
import { MESSAGES } from '../../schemas/messages.js'
import type { ConnectionWaits } from '../../store/store.js'
import { HttpError } from '../errors.js'

/** The event loop's thread, as the kernel schedules it: ms it ran on a CPU so far, and ms it waited for one while it had work. */
export interface ThreadTimes { ranMs: number, waitedMs: number }
/** Reads the event loop's thread's times (src/process/loop-thread.ts); undefined where the kernel tells none. */
export type LoopThread = () => ThreadTimes | undefined

/** Why a request was refused: the event loop behind, calls waiting for a connection, a call that waited past POOL_WAIT, or MAX_QUEUE_DELAY=0. */
export const REFUSAL_REASONS = ['event_loop', 'connection_queue', 'pool_wait', 'forced'] as const
export type RefusalReason = typeof REFUSAL_REASONS[number]

/** A refused caller comes back after this, with the client's jitter on top (packages/client). */
const REFUSAL_RETRY_AFTER_SECONDS = 1

/** The refusal's answer, made once: the admission stage and the pool's bound (error-handler.ts) send it. */
export const REFUSAL = new HttpError('unavailable', MESSAGES.overloaded(REFUSAL_RETRY_AFTER_SECONDS), { 'retry-after': String(REFUSAL_RETRY_AFTER_SECONDS) })
const REFUSAL_BODY = JSON.stringify(REFUSAL.toBody())

/**
 * How far the event loop runs behind for work of its own: a timer of its own, due every `tickMs`
 * while requests come (none while the service idles: its wake-ups would spend a CPU quota), and
 * how late it is, less the time the loop's thread waited for a CPU meanwhile and at most the time
 * it ran: a wait for a CPU, or in a blocking call (a slow disk), is no work of the loop's.
 */
class LoopDelay {
  readonly #tickMs: number
  readonly #thread: LoopThread
  #timer: NodeJS.Timeout | undefined
  #due = 0
  #atArm: ThreadTimes | undefined
  #lastLateMs = 0
  #asked = false

  constructor (tickMs: number, thread: LoopThread) {
    this.#tickMs = tickMs
    this.#thread = thread
  }

  /**
   * The later of how late the timer last ran, and how overdue it is now (a long turn of the loop,
   * still going), for work of the loop's own; the kernel is asked only past `boundMs`.
   */
  behindMs (now: number, boundMs: number): number {
    this.#asked = true
    if (this.#timer === undefined) this.#arm(now, this.#thread())
    const overdueMs = now - this.#due
    return Math.max(this.#lastLateMs, overdueMs > boundMs ? this.#ownPart(overdueMs) : overdueMs)
  }

  stop (): void {
    clearTimeout(this.#timer)
  }

  #ownPart (lateMs: number, times = this.#thread()): number {
    const before = this.#atArm
    if (times === undefined || before === undefined) return lateMs
    return Math.min(lateMs - (times.waitedMs - before.waitedMs), times.ranMs - before.ranMs)
  }

  #arm (now: number, times: ThreadTimes | undefined): void {
    this.#due = now + this.#tickMs
    this.#atArm = times
    this.#timer = setTimeout(this.#ran, this.#tickMs).unref()
  }

  readonly #ran = (): void => {
    const now = performance.now()
    const times = this.#thread()
    this.#lastLateMs = this.#ownPart(now - this.#due, times)
    this.#timer = undefined
    // Asked since, or late past a tick (requests may wait behind the stall, unread yet): the timer
    // goes on and its reading holds a tick; else it rests until the next request.
    if (this.#asked || this.#lastLateMs > this.#tickMs) this.#arm(now, times)
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
 * @param thread the event loop's thread's times; `() => undefined` takes every lateness for the loop's own
 * @example const admission = admitUnlessBehind(50, store.waits, loopThreadTimes); app.addHook('onRequest', admission.check)
 */
export function admitUnlessBehind (maxDelayMs: number, waits: ConnectionWaits, thread: LoopThread): Admission {
  // Four looks within the delay it bounds: a long turn of the loop shows at most a quarter of it late.
  const tickMs = Math.max(1, maxDelayMs / 4)
  const loop = new LoopDelay(tickMs, thread)
  const refusalOf = (): RefusalReason | undefined => {
    if (maxDelayMs === 0) return 'forced'
    if (loop.behindMs(performance.now(), maxDelayMs) > maxDelayMs) return 'event_loop'
    if (waits.oldestMs() > maxDelayMs) return 'connection_queue'
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
