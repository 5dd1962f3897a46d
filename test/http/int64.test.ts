import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parse } from 'lossless-json'
import { toInt64 } from '../../src/schemas/int64.js'
import { backends, get, post, startTestServer, type TestServer } from '../support/helper.js'
import { followPages } from '../support/list-pages.js'

// Integers as the wire carries them: any number literal is kept as its exact digits.
function exact (text: string): unknown {
  return parse(text, null, (literal) => literal)
}

const INT64_MAX = '9223372036854775807'
const TWO_POW_53_PLUS_1 = '9007199254740993'

for (const backend of backends()) {
  describe(`${backend.name}: int64 ids and categoryIds`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    for (const categoryId of [INT64_MAX, TWO_POW_53_PLUS_1]) {
      it(`keeps categoryId ${categoryId} exact through POST, GET and the list`, async () => {
        const created = await post(server, '/pets', `{"name":"big","categoryId":${categoryId},"status":"pending"}`)
        assert.equal(created.status, 201)
        const pet = exact(await created.text()) as { id: string, categoryId: string }
        assert.equal(pet.categoryId, categoryId)

        const fetched = exact(await (await get(server, `/pets/${pet.id}`)).text()) as { categoryId: string }
        assert.equal(fetched.categoryId, categoryId)

        const listed = exact(await (await get(server, '/pets?limit=100&status=pending')).text()) as Array<{ id: string, categoryId: string }>
        assert.equal(listed.find((p) => p.id === pet.id)?.categoryId, categoryId)
      })
    }

    it('lists and gets ids above 2^53 exactly, and the next create continues after them', async () => {
      const ids = [TWO_POW_53_PLUS_1, '9223372036854775000']
      await server.store.importPets(ids.map((id, i) => ({ id: toInt64(BigInt(id)), name: `imported ${i}`, categoryId: toInt64(BigInt(id)), status: 'sold' })))

      const listed = exact(await (await get(server, '/pets?limit=100&status=sold')).text()) as Array<{ id: string, categoryId: string }>
      assert.deepEqual(listed.map((p) => p.id), ids)
      assert.deepEqual(listed.map((p) => p.categoryId), ids)
      for (const id of ids) {
        const response = await get(server, `/pets/${id}`)
        assert.equal(response.status, 200)
        assert.equal((exact(await response.text()) as { id: string }).id, id)
      }

      // Paging by cursor past an id above 2^53 must not round it (and so neither skip nor repeat).
      const pages = await followPages(`${server.api}/pets?limit=1&status=sold`)
      assert.deepEqual(pages.map((page) => (exact(page.text) as Array<{ id: string }>).map((p) => p.id)), [[ids[0]], [ids[1]]])

      const created = await post(server, '/pets', { name: 'after the import', categoryId: 1 })
      assert.equal(created.status, 201)
      assert.equal((exact(await created.text()) as { id: string }).id, '9223372036854775001')
    })
  })
}
