import type { Int64 } from '../schemas/int64.js'
import type { Pet } from '../schemas/pets.js'
import type { Store } from './store.js'

/**
 * Every animal in id order, a keyset page at a time (export).
 * @example for await (const page of exportPages(store, 1000)) write(page)
 */
export async function * exportPages (store: Pick<Store, 'listPets'>, pageSize: number): AsyncGenerator<readonly Pet[]> {
  let afterId: Int64 = 0
  for (;;) {
    const page = await store.listPets({ limit: pageSize, afterId })
    if (page.length === 0) return
    yield page
    afterId = page[page.length - 1]!.id
  }
}
