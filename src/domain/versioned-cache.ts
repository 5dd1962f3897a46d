/**
 * Recently served list pages, valid for one version of the animals
 * (`Store.petsVersion`): the first request after any change, in this process or
 * another, finds the cache empty.
 */
export class VersionedCache<V> {
  readonly #maxEntries: number
  #version: number | undefined
  readonly #entries = new Map<string, V>()

  /** @example const pages = new VersionedCache<PetPage>(1024) */
  constructor (maxEntries: number) {
    this.#maxEntries = maxEntries
  }

  /** The value cached under `key` for this version of the data. */
  get (version: number, key: string): V | undefined {
    if (version !== this.#version) {
      this.#entries.clear()
      this.#version = version
      return undefined
    }
    return this.#entries.get(key)
  }

  /** Keeps a value read at `version`; ignored when the data has changed since. */
  set (version: number, key: string, value: V): void {
    if (version !== this.#version) return
    // The oldest entry goes first (Map keeps insertion order).
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(key, value)
  }
}
