/**
 * The connections a store's calls take in turn: at most `size` holders at once (PostgreSQL's
 * pool, SQLite's writer thread), the others waiting first come, first served, each at most
 * `maxWaitMs`, then refused with ConnectionWaitExceeded. How long the oldest has waited is read
 * from memory, for each request, by the admission stage (src/http/admission.ts).
 * Written here: p-limit and p-queue bound the work, not the wait for a turn.
 */
import { performance } from 'node:perf_hooks'
import { ConnectionWaitExceeded } from './store-errors.js'
import type { ConnectionWaits } from './store.js'

/** A caller's place: `granted` settles once a slot is its own (release it then), or past the bound. */
export interface Ticket {
  readonly granted: Promise<void>
  /** A slot was free: `granted` is settled already, and the caller may go on at once. */
  readonly atOnce: boolean
  /** Still waiting for a slot. */
  readonly waiting: boolean
  /** No longer wanted: a wait is given up, a slot already granted is released. */
  cancel: () => void
}

interface Waiter {
  since: number
  state: 'waiting' | 'granted' | 'gone'
  grant: () => void
  refuse: (err: Error) => void
}

const GRANTED_AT_ONCE = Promise.resolve()

/** @example const slots = new Slots(10, 1_000); await slots.take().granted; try { … } finally { slots.release() } */
export class Slots implements ConnectionWaits {
  readonly #maxWaitMs: number
  #free: number
  // First come, first served; given-up waiters are skipped when met.
  readonly #queue: Waiter[] = []
  #waiting = 0
  #timer: NodeJS.Timeout | undefined

  constructor (size: number, maxWaitMs: number) {
    this.#free = size
    this.#maxWaitMs = maxWaitMs
  }

  take (): Ticket {
    if (this.#free > 0 && this.#waiting === 0) {
      this.#free--
      let held = true
      return { granted: GRANTED_AT_ONCE, atOnce: true, waiting: false, cancel: () => { if (held) this.release(); held = false } }
    }
    const waiter: Waiter = { since: performance.now(), state: 'waiting', grant: () => {}, refuse: () => {} }
    const granted = new Promise<void>((resolve, reject) => {
      waiter.grant = resolve
      waiter.refuse = reject
    })
    this.#queue.push(waiter)
    this.#waiting++
    this.#timer ??= setTimeout(this.#expire, this.#maxWaitMs)
    return {
      granted,
      atOnce: false,
      get waiting () { return waiter.state === 'waiting' },
      cancel: () => {
        if (waiter.state === 'granted') this.release()
        else if (waiter.state === 'waiting') this.#waiting--
        waiter.state = 'gone'
        this.#stopTimerIfNoneWaits()
      }
    }
  }

  /** Gives a held slot back: to the next waiter, if any. */
  release (): void {
    const next = this.#next()
    if (next === undefined) {
      this.#free++
      return
    }
    next.state = 'granted'
    this.#waiting--
    this.#stopTimerIfNoneWaits()
    next.grant()
  }

  count (): number {
    return this.#waiting
  }

  oldestMs (): number {
    const oldest = this.#next(false)
    return oldest === undefined ? 0 : performance.now() - oldest.since
  }

  /** The timer keeps the process up only while someone waits. */
  #stopTimerIfNoneWaits (): void {
    if (this.#waiting > 0 || this.#timer === undefined) return
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** The first waiter still waiting, taken off the queue unless `take` is false. */
  #next (take = true): Waiter | undefined {
    while (this.#queue.length > 0 && this.#queue[0]!.state !== 'waiting') this.#queue.shift()
    return take ? this.#queue.shift() : this.#queue[0]
  }

  /** Refuses every waiter past the bound, then waits for the next one's turn to come. */
  readonly #expire = (): void => {
    this.#timer = undefined
    const now = performance.now()
    for (let oldest = this.#next(false); oldest !== undefined && now - oldest.since >= this.#maxWaitMs; oldest = this.#next(false)) {
      this.#queue.shift()
      oldest.state = 'gone'
      this.#waiting--
      oldest.refuse(new ConnectionWaitExceeded(this.#maxWaitMs))
    }
    const oldest = this.#next(false)
    if (oldest !== undefined) this.#timer = setTimeout(this.#expire, this.#maxWaitMs - (now - oldest.since))
  }
}
