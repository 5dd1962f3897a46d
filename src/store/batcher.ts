/**
 * The create batcher of both databases: each item takes its turn for a connection (Slots), and
 * whoever's turn comes commits with it the items still waiting for one, up to a batch. Each
 * caller's promise settles only when its own batch has committed (or failed: then every item of
 * that batch, and only those, get the error); an item that waits past the slots' bound, beyond the
 * next turn, is refused alone. SQLite's one writer waits a turn of the event loop to gather;
 * PostgreSQL sends at once while a connection is free, and batches only what waits for one.
 */
import type { Slots, Waiter } from './slots.js'

export interface BatchPolicy {
  /** Items in one commit at most: a batch's transaction stays short. */
  maxBatch: number
  /** A turn waits for the rest of this turn of the event loop before it commits. */
  gatherTurn: boolean
}

/** An item and its caller, waiting in the slots' queue itself: one object a create. */
class Entry<I, O> implements Waiter {
  since = 0
  state: Waiter['state'] = 'waiting'
  readonly batched = true

  constructor (readonly item: I, readonly resolve: (out: O) => void, readonly refused: (err: unknown) => void,
    private readonly turnCame: (entry: Entry<I, O>) => Promise<void>) {}

  granted (): void {
    void this.turnCame(this)
  }
}

export class Batcher<I, O> {
  readonly #commit: (items: I[]) => Promise<O[]>
  readonly #policy: BatchPolicy
  readonly #slots: Slots
  // In arrival order; those no longer waiting (refused, or in a batch) are dropped at the next batch.
  #waiting: Array<Entry<I, O>> = []

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
      const entry = new Entry<I, O>(item, resolve, reject, this.#commitFrom)
      // A free slot: its turn starts now (SQLite's gathering turn with it).
      if (this.#slots.tryTake()) {
        void this.#commitFrom(entry)
        return
      }
      this.#waiting.push(entry)
      this.#slots.wait(entry)
    })
  }

  /** The turn of `first` came: it commits, with the items still waiting for a turn, up to a batch. */
  readonly #commitFrom = async (first: Entry<I, O>): Promise<void> => {
    if (this.#policy.gatherTurn) await new Promise(setImmediate)
    const batch = [first]
    const left: Array<Entry<I, O>> = []
    for (const other of this.#waiting) {
      if (other.state !== 'waiting') continue
      if (batch.length === this.#policy.maxBatch) {
        left.push(other)
        continue
      }
      this.#slots.leave(other)
      batch.push(other)
    }
    this.#waiting = left
    try {
      const outcomes = await this.#commit(batch.map((entry) => entry.item))
      if (outcomes.length !== batch.length) throw new Error(`${batch.length} items committed, ${outcomes.length} outcomes returned`)
      batch.forEach((entry, index) => entry.resolve(outcomes[index]!))
    } catch (err) {
      for (const entry of batch) entry.refused(err)
    } finally {
      this.#slots.release()
    }
  }
}
