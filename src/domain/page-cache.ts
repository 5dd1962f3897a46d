/**
 * Recently served pages, valid for one version of the animals (`Store.petsVersion`):
 * the first request after any change, in this process or another, finds it empty.
 */
export class PageCache<P> {
  readonly #maxPages: number
  #version: number | undefined
  readonly #pages = new Map<string, P>()

  /** @example const pages = new PageCache<PetPage>(1024) */
  constructor (maxPages: number) {
    this.#maxPages = maxPages
  }

  /** The page cached under `key` for this version of the data. */
  get (version: number, key: string): P | undefined {
    if (version !== this.#version) {
      this.#pages.clear()
      this.#version = version
      return undefined
    }
    return this.#pages.get(key)
  }

  /** Keeps a page read at `version`; ignored when the data has changed since. */
  set (version: number, key: string, page: P): void {
    if (version !== this.#version) return
    // The oldest entry goes first (Map keeps insertion order).
    if (this.#pages.size >= this.#maxPages) this.#pages.delete(this.#pages.keys().next().value!)
    this.#pages.set(key, page)
  }
}
