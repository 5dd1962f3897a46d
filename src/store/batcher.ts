/**
 * The create batcher of both databases: each item takes its turn for a connection (Slots), and
 * whoever's turn comes commits with it the items still waiting for one, up to a batch. Each
 * caller's promise settles only when its own batch has committed (or failed: then every item of
 * that batch, and only those, get the error); an item that waits past the slots' bound is
 * refused alone. SQLite's one writer waits a turn of the event loop to gather; PostgreSQL sends
 * at once while a connection is free, and batches only what waits for one.
 */
import type { Slots, Ticket } from './slots.js'

export interface BatchPolicy {
  /** Items in one commit at most: a batch's transaction stays short. */
  maxBatch: number
  /** A turn waits for the rest of this turn of the event loop before it commits. */
  gatherTurn: boolean
}

interface Waiting<I, O> {
  item: I
  ticket: Ticket
  /** In a batch already: its own turn, when it comes, is given back. */
  taken: boolean
  resolve: (out: O) => void
  reject: (err: unknown) => void
}

export class Batcher<I, O> {
  readonly #commit: (items: I[]) => Promise<O[]>
  readonly #policy: BatchPolicy
  readonly #slots: Slots
  #waiting: Array<Waiting<I, O>> = []

  /**
   * @param commit commits a batch on the connection its turn holds; returns one outcome per item, in order
   * @example const creates = new Batcher((requests) => writer.createPets(requests), { maxBatch: 256, gatherTurn: true }, new Slots(1, 1_000))
   */
  constructor (commit: (items: I[]) => Promise<O[]>, policy: BatchPolicy, slots: Slots) {
    this.#commit = commit
    this.#policy = policy
    this.#slots = slots
  }

  submit (item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const entry: Waiting<I, O> = { item, ticket: this.#slots.take(), taken: false, resolve, reject }
      this.#waiting.push(entry)
      // A free slot: its turn starts now (SQLite's gathering turn with it).
      if (entry.ticket.atOnce) {
        void this.#commitFrom(entry)
        return
      }
      entry.ticket.granted.then(async () => { await this.#commitFrom(entry) }, (err: unknown) => {
        this.#waiting = this.#waiting.filter((waiting) => waiting !== entry)
        reject(err)
      })
    })
  }

  /** The turn of `entry` came: it commits, with the items still waiting for a turn, up to a batch. */
  async #commitFrom (entry: Waiting<I, O>): Promise<void> {
    if (this.#policy.gatherTurn) await new Promise(setImmediate)
    if (entry.taken) return entry.ticket.cancel()
    const batch = [entry]
    for (const other of this.#waiting) {
      if (batch.length === this.#policy.maxBatch) break
      if (other.ticket.waiting) batch.push(other)
    }
    for (const waiting of batch) {
      waiting.taken = true
      if (waiting !== entry) waiting.ticket.cancel()
    }
    this.#waiting = this.#waiting.filter((waiting) => !waiting.taken)
    try {
      const outcomes = await this.#commit(batch.map((waiting) => waiting.item))
      if (outcomes.length !== batch.length) throw new Error(`${batch.length} items committed, ${outcomes.length} outcomes returned`)
      batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!))
    } catch (err) {
      for (const waiting of batch) waiting.reject(err)
    } finally {
      this.#slots.release()
    }
  }
}
