/**
 * The create batcher of both databases: items submitted while every commit slot is busy wait,
 * and go together as the next commit. Each caller's promise settles only when its own batch has
 * committed (or failed: then every item of that batch, and only those, get the error). Each
 * adapter gives its policy: SQLite's one writer waits a turn of the event loop to gather, while
 * PostgreSQL sends at once and batches only when its pool is full.
 */

export interface BatchPolicy {
  /** Items in one commit at most: a batch's transaction stays short. */
  maxBatch: number
  /** Commits running at once; past it, items wait for a slot. */
  slots: number
  /** A free slot waits for the rest of this turn of the event loop before it commits. */
  gatherTurn: boolean
}

interface Waiting<I, O> {
  item: I
  resolve: (out: O) => void
  reject: (err: unknown) => void
}

export class Batcher<I, O> {
  readonly #commit: (items: I[]) => Promise<O[]>
  readonly #policy: BatchPolicy
  readonly #waiting: Array<Waiting<I, O>> = []
  #busy = 0

  /**
   * @param commit commits a batch; returns one outcome per item, in order
   * @example const creates = new Batcher((requests) => writer.createPets(requests), { maxBatch: 256, slots: 1, gatherTurn: true })
   */
  constructor (commit: (items: I[]) => Promise<O[]>, policy: BatchPolicy) {
    this.#commit = commit
    this.#policy = policy
  }

  submit (item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject })
      if (this.#busy === this.#policy.slots) return
      this.#busy++
      if (this.#policy.gatherTurn) setImmediate(this.#drain)
      else void this.#drain()
    })
  }

  /** One slot: commits batches while items wait, then frees itself. */
  readonly #drain = async (): Promise<void> => {
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#policy.maxBatch)
      try {
        const outcomes = await this.#commit(batch.map((entry) => entry.item))
        if (outcomes.length !== batch.length) throw new Error(`${batch.length} items committed, ${outcomes.length} outcomes returned`)
        batch.forEach((entry, index) => entry.resolve(outcomes[index]!))
      } catch (err) {
        for (const entry of batch) entry.reject(err)
      }
    }
    this.#busy--
  }
}
