import type { Int64 } from '../schemas/kinds.js'
import type { Pet } from '../schemas/pets.js'
import type { ListPetsOptions } from './store.js'

/**
 * Every animal in id order, a keyset page at a time: how each adapter exports.
 * @example for await (const page of exportPages((o) => store.listPets(o), 1000)) write(page)
 */
export async function * exportPages (listPets: (options: ListPetsOptions) => Promise<Pet[]>, pageSize: number): AsyncGenerator<Pet[]> {
  let afterId: Int64 = 0
  for (;;) {
    const page = await listPets({ limit: pageSize, afterId })
    if (page.length === 0) return
    yield page
    afterId = page[page.length - 1]!.id
  }
}
