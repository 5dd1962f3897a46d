import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { after, before, describe, it } from 'node:test'
import { openStore } from '../../src/store/open-store.js'
import { TEST_KEY } from '../support/constants.js'
import { backends, get, post, startTestServer, type TestServer } from '../support/helper.js'
import { rawRequest } from '../support/raw-http.js'

async function names (server: TestServer, query = '?limit=100'): Promise<string[]> {
  const response = await get(server, `/pets${query}`)
  assert.equal(response.status, 200)
  return (await response.json() as Array<{ name: string }>).map((pet) => pet.name)
}

for (const backend of backends()) {
  describe(`${backend.name}: lists and gets show every commit at once, from any connection`, { skip: backend.skip }, () => {
    let first: TestServer
    let second: TestServer
    before(async () => {
      first = await startTestServer({ backend: backend.name })
      second = await startTestServer({ database: first.database })
    })
    after(async () => {
      await second?.close()
      await first?.close()
    })

    it('gives each caller the next link of its own Host, the page being the same', async () => {
      await post(first, '/pets', { name: 'one', categoryId: 1 })
      await post(first, '/pets', { name: 'two', categoryId: 1 })
      for (const host of ['a.example', 'b.example:8443', 'a.example']) {
        const response = await rawRequest(first.origin, `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`)
        assert.equal(response.status, 200)
        assert.match(String(response.headers.link), new RegExp(`^<http://${host.replace('.', '\\.')}/v1/pets\\?limit=1&cursor=[^>]+>; rel="next"$`))
      }
    })

    it('shows an animal created through this instance on the next list', async () => {
      const before = await names(first)
      assert.equal((await post(first, '/pets', { name: 'created here', categoryId: 1 })).status, 201)
      assert.deepEqual(await names(first), [...before, 'created here'])
    })

    it('shows an animal created through another instance on the next list', async () => {
      const before = await names(first)
      assert.equal((await post(second, '/pets', { name: 'created there', categoryId: 1 })).status, 201)
      assert.deepEqual(await names(first), [...before, 'created there'])
    })

    it('shows animals loaded by another connection (petstore import) on the next list', async () => {
      const before = await names(first)
      const other = await openStore(first.database.url)
      try {
        await other.importPets([{ id: 1_000_000, name: 'imported', categoryId: 1, status: 'sold' }])
      } finally {
        await other.close()
      }
      assert.deepEqual(await names(first), [...before, 'imported'])
      assert.deepEqual(await names(first, '?status=sold'), ['imported'])
    })

    if (backend.name === 'sqlite') {
      it('serves an animal changed in the database by another connection as changed', async () => {
        const { id } = await (await post(first, '/pets', { name: 'before', categoryId: 1 })).json() as { id: number }
        assert.equal((await (await get(first, `/pets/${id}`)).json() as { name: string }).name, 'before')
        const other = new Database(first.database.url.slice('sqlite:'.length))
        try {
          other.prepare('UPDATE pets SET name = ? WHERE id = ?').run('after', id)
        } finally {
          other.close()
        }
        assert.equal((await (await get(first, `/pets/${id}`)).json() as { name: string }).name, 'after')
        assert.equal((await (await get(second, `/pets/${id}`)).json() as { name: string }).name, 'after')
      })
    }
  })
}
