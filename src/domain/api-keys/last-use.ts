import type { Store } from '../../store/store.js'

// lastUsedAt is written at first sight, then at most this often per key and instance.
const LAST_USE_EVERY_MS = 60_000
// First sights within this time go to the store in one batch.
const LAST_USE_BATCH_MS = 1_000

/**
 * The last use of each store key, written at first sight (batched within a second), then at
 * most once a minute per key, and the latest of each at close: never a write per request.
 */
export class LastUses {
  readonly #uses = new Map<string, { latest: number, written: number }>()
  readonly #pending = new Map<string, number>()
  readonly #store: Store
  readonly #onError: (err: unknown) => void
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> = Promise.resolve()

  /** @example const uses = new LastUses(store, (err) => log.warn(err)); uses.note(keyHash, Date.now()) */
  constructor (store: Store, onError: (err: unknown) => void) {
    this.#store = store
    this.#onError = onError
  }

  /** A use of the key at `now` (ms since the epoch): written now, soon, or at close. */
  note (keyHash: string, now: number): void {
    const use = this.#uses.get(keyHash)
    if (use !== undefined) {
      use.latest = now
      if (now - use.written < LAST_USE_EVERY_MS) return
      use.written = now
    } else {
      this.#uses.set(keyHash, { latest: now, written: now })
    }
    this.#pending.set(keyHash, now)
    this.#timer ??= setTimeout(() => { void this.#flush() }, LAST_USE_BATCH_MS).unref()
  }

  /** Writes the latest use of every key not yet written. */
  async close (): Promise<void> {
    clearTimeout(this.#timer)
    for (const [keyHash, use] of this.#uses) {
      if (use.latest > use.written) this.#pending.set(keyHash, use.latest)
    }
    await this.#flush()
  }

  async #flush (): Promise<void> {
    this.#timer = undefined
    const batch = [...this.#pending].map(([keyHash, at]) => ({ keyHash, at: new Date(at) }))
    this.#pending.clear()
    if (batch.length === 0) return await this.#writing
    // One write at a time: a batch never races the one before it.
    this.#writing = this.#writing.then(async () => {
      await this.#store.recordApiKeyUses(batch)
    }).catch(this.#onError)
    await this.#writing
  }
}
