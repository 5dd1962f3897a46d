/**
 * Group commit: creates submitted while a commit is being prepared or is running
 * are gathered and committed together, one transaction and one fsync for many
 * requests (SQLite has one writer, and each commit waits for its fsync). Each
 * caller's promise settles only when its own batch has committed (or failed: then
 * every request of that batch, and only those, get the error).
 */
export class GroupCommit<I, O> {
  readonly #commit: (items: I[]) => Promise<O[]>
  readonly #maxBatch: number
  #queue: Array<{ item: I, resolve: (out: O) => void, reject: (err: unknown) => void }> = []
  #active = false

  /**
   * @param commit commits a batch; returns one outcome per item, in order
   * @example const creates = new GroupCommit((requests) => writer.createPets(requests), 256)
   */
  constructor (commit: (items: I[]) => Promise<O[]>, maxBatch: number) {
    this.#commit = commit
    this.#maxBatch = maxBatch
  }

  submit (item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      if (!this.#active) {
        this.#active = true
        // Wait for the other requests already read in this turn of the event loop.
        setImmediate(() => { void this.#drain() })
      }
    })
  }

  async #drain (): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch)
      try {
        const outcomes = await this.#commit(batch.map((entry) => entry.item))
        batch.forEach((entry, index) => entry.resolve(outcomes[index]!))
      } catch (err) {
        for (const entry of batch) entry.reject(err)
      }
    }
    this.#active = false
  }
}
