/**
 * The connections a store's calls take in turn: at most `size` holders at once (PostgreSQL's
 * pool, SQLite's writer thread), the others waiting first come, first served. The wait is bounded
 * where a queue of the service's own stands: a call with more calls ahead of it than one turn of
 * the connections serves (a batch of creates counted as the one call it is) is refused with
 * ConnectionWaitExceeded past `maxWaitMs`; a call the next turn serves waits for that turn however
 * slow it is (a slow disk, a slow database: the store's own timeouts bound it), since refusing it
 * would serve nobody sooner. How long the oldest call has waited, while a call asking now would
 * wait beyond the next turn, is read from memory, for each request, by the admission stage
 * (src/http/stages/admission.ts). Written here: p-limit and p-queue bound the work, not the wait
 * for a turn.
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
  /** A create that goes with the others waiting (src/store/batcher.ts): `perTurn` of them take one connection's turn. */
  batched?: true
  granted: () => void
  refused: (err: Error) => void
}

const GRANTED_AT_ONCE = Promise.resolve()

/** @example const slots = new Slots(10, 1_000); await slots.take(); try { … } finally { slots.release() } */
export class Slots implements ConnectionWaits {
  readonly #maxWaitMs: number
  readonly #perTurn: number
  /** What one turn of the connections serves, in shares: a batched waiter is one, any other `perTurn`. */
  readonly #turn: number
  #free: number
  // First come, first served; waiters gone are skipped when met.
  readonly #queue: Waiter[] = []
  #waiting = 0
  /** The shares of the turns the waiters take. */
  #shares = 0
  #timer: NodeJS.Timeout | undefined

  /** @param perTurn the batched waiters one connection serves in a turn: a batch of creates */
  constructor (size: number, maxWaitMs: number, perTurn = 1) {
    this.#free = size
    this.#maxWaitMs = maxWaitMs
    this.#perTurn = perTurn
    this.#turn = size * perTurn
  }

  #share (waiter: Waiter): number {
    return waiter.batched === true ? 1 : this.#perTurn
  }

  /** `waiter` leaves the count of those waiting, granted or gone. */
  #stopWaiting (waiter: Waiter, state: 'granted' | 'gone'): void {
    waiter.state = state
    this.#waiting--
    this.#shares -= this.#share(waiter)
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
    this.#shares += this.#share(waiter)
    // Beyond the next turn: its wait is bounded (none before it is).
    if (this.#shares > this.#turn) this.#timer ??= setTimeout(this.#expire, this.#maxWaitMs)
  }

  /** A slot, waited for if need be; rejects with ConnectionWaitExceeded past the bound. */
  take (): Promise<void> {
    if (this.tryTake()) return GRANTED_AT_ONCE
    return new Promise((resolve, reject) => { this.wait({ since: 0, state: 'waiting', granted: resolve, refused: reject }) })
  }

  /** `waiter` no longer waits: it will be neither granted nor refused. */
  leave (waiter: Waiter): void {
    if (waiter.state !== 'waiting') return
    this.#stopWaiting(waiter, 'gone')
    this.#stopTimerIfNoneBeyondTurn()
  }

  /** Gives a held slot back: to the next waiter, if any. */
  release (): void {
    const next = this.#next()
    if (next === undefined) {
      this.#free++
      return
    }
    this.#stopWaiting(next, 'granted')
    this.#stopTimerIfNoneBeyondTurn()
    next.granted()
  }

  count (): number {
    return this.#waiting
  }

  oldestMs (): number {
    if (this.#shares < this.#turn) return 0
    const oldest = this.#next(false)
    return oldest === undefined ? 0 : performance.now() - oldest.since
  }

  /** The timer keeps the process up only while someone waits beyond the next turn. */
  #stopTimerIfNoneBeyondTurn (): void {
    if (this.#shares > this.#turn || this.#timer === undefined) return
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** The first waiter the next turn will not serve. */
  #oldestBeyondTurn (): Waiter | undefined {
    if (this.#shares <= this.#turn) return undefined
    let ahead = 0
    for (const waiter of this.#queue) {
      if (waiter.state !== 'waiting') continue
      ahead += this.#share(waiter)
      if (ahead > this.#turn) return waiter
    }
    return undefined
  }

  /** The first waiter still waiting, taken off the queue unless `take` is false. */
  #next (take = true): Waiter | undefined {
    while (this.#queue.length > 0 && this.#queue[0]!.state !== 'waiting') this.#queue.shift()
    return take ? this.#queue.shift() : this.#queue[0]
  }

  /** Refuses every waiter beyond the next turn past the bound, then waits for the next one's bound. */
  readonly #expire = (): void => {
    this.#timer = undefined
    const now = performance.now()
    for (let oldest = this.#oldestBeyondTurn(); oldest !== undefined && now - oldest.since >= this.#maxWaitMs; oldest = this.#oldestBeyondTurn()) {
      this.#stopWaiting(oldest, 'gone')
      oldest.refused(new ConnectionWaitExceeded(this.#maxWaitMs))
    }
    const oldest = this.#oldestBeyondTurn()
    if (oldest !== undefined) this.#timer = setTimeout(this.#expire, this.#maxWaitMs - (now - oldest.since))
  }
}
