/**
 * The connections a store's calls take in turn: at most `size` holders at once (PostgreSQL's
 * pool, SQLite's writer thread), the others waiting first come, first served, each at most
 * `maxWaitMs`, then refused with ConnectionWaitExceeded. How long the oldest has waited is read
 * from memory, for each request, by the admission stage (src/http/stages/admission.ts).
 * Written here: p-limit and p-queue bound the work, not the wait for a turn.
 */
import { performance } from 'node:perf_hooks'
import { ConnectionWaitExceeded } from './store-errors.js'
import type { ConnectionWaits } from './store.js'

/**
 * A caller's place in the queue, told once: `granted` (the slot is its own: release it then) or
 * `refused` past the bound. The caller's own object, so a wait costs no promise of ours.
 */
export interface Waiter {
  /** When it began to wait: set by the slots. */
  since: number
  /** Set by the slots: `gone` once refused or left. */
  state: 'waiting' | 'granted' | 'gone'
  granted: () => void
  refused: (err: Error) => void
}

const GRANTED_AT_ONCE = Promise.resolve()

/** @example const slots = new Slots(10, 1_000); await slots.take(); try { … } finally { slots.release() } */
export class Slots implements ConnectionWaits {
  readonly #maxWaitMs: number
  #free: number
  // First come, first served; waiters gone are skipped when met.
  readonly #queue: Waiter[] = []
  #waiting = 0
  #timer: NodeJS.Timeout | undefined

  constructor (size: number, maxWaitMs: number) {
    this.#free = size
    this.#maxWaitMs = maxWaitMs
  }

  /** A slot, now if one is free and nobody waits first: then it is the caller's, to release. */
  tryTake (): boolean {
    if (this.#free === 0 || this.#waiting > 0) return false
    this.#free--
    return true
  }

  /** Queues `waiter` for the next free slot. */
  wait (waiter: Waiter): void {
    waiter.since = performance.now()
    waiter.state = 'waiting'
    this.#queue.push(waiter)
    this.#waiting++
    this.#timer ??= setTimeout(this.#expire, this.#maxWaitMs)
  }

  /** A slot, waited for if need be; rejects with ConnectionWaitExceeded past the bound. */
  take (): Promise<void> {
    if (this.tryTake()) return GRANTED_AT_ONCE
    return new Promise((resolve, reject) => { this.wait({ since: 0, state: 'waiting', granted: resolve, refused: reject }) })
  }

  /** `waiter` no longer waits: it will be neither granted nor refused. */
  leave (waiter: Waiter): void {
    if (waiter.state !== 'waiting') return
    waiter.state = 'gone'
    this.#waiting--
    this.#stopTimerIfNoneWaits()
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
    next.granted()
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
      oldest.refused(new ConnectionWaitExceeded(this.#maxWaitMs))
    }
    const oldest = this.#next(false)
    if (oldest !== undefined) this.#timer = setTimeout(this.#expire, this.#maxWaitMs - (now - oldest.since))
  }
}
