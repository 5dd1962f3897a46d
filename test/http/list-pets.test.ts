import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backends, errorBody, get, post, startTestServer, type TestServer } from '../support/helper.js'
import { followPages, nextLink } from '../support/list-pages.js'

for (const backend of backends()) {
  describe(`${backend.name}: GET /v1/pets`, { skip: backend.skip }, () => {
    let server: TestServer
    const statuses = ['available', 'pending', 'sold'] as const
    before(async () => {
      server = await startTestServer({ backend: backend.name })
      for (let i = 0; i < 45; i++) {
        const response = await post(server, '/pets', { name: `pet ${i}`, categoryId: i + 1, status: statuses[i % 3] })
        assert.equal(response.status, 201)
      }
    })
    after(async () => { await server.close() })

    it('answers 20 animals by default, in ascending id order, each with exactly four fields', async () => {
      const response = await get(server, '/pets')
      assert.equal(response.status, 200)
      const pets = await response.json() as Array<Record<string, unknown>>
      assert.equal(pets.length, 20)
      const ids = pets.map((pet) => pet.id as number)
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b))
      for (const pet of pets) assert.deepEqual(Object.keys(pet).sort(), ['categoryId', 'id', 'name', 'status'])
      assert.equal(response.headers.get('cache-control'), 'no-store')
    })

    it('honours limit from 1 to 100', async () => {
      assert.equal((await (await get(server, '/pets?limit=1')).json() as unknown[]).length, 1)
      assert.equal((await (await get(server, '/pets?limit=100')).json() as unknown[]).length, 45)
    })

    it('filters by status', async () => {
      const pets = await (await get(server, '/pets?status=sold&limit=100')).json() as Array<{ status: string }>
      assert.equal(pets.length, 15)
      assert.ok(pets.every((pet) => pet.status === 'sold'))
    })

    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1e1', 'limit=0x10', 'limit=%2B5', 'limit=%205', 'limit=-1', 'limit=1&limit=2', 'limit=99999999999999999999999']) {
      it(`answers 400 validation_failed when ${query}`, async () => {
        const response = await get(server, `/pets?${query}`)
        assert.equal(response.status, 400)
        const body = await errorBody(response)
        assert.equal(body.code, 'validation_failed')
        assert.match(body.message, /^limit: /)
      })
    }

    for (const query of ['status=lost', 'status=', 'status=SOLD', 'status=sold&status=pending']) {
      it(`answers 400 validation_failed when ${query}`, async () => {
        const body = await errorBody(await get(server, `/pets?${query}`))
        assert.equal(body.code, 'validation_failed')
        assert.match(body.message, /^status: /)
      })
    }

    it('names the rule in the message', async () => {
      const body = await errorBody(await get(server, '/pets?limit=0'))
      assert.equal(body.message, 'limit: must be an integer from 1 to 100')
    })

    it('ignores unknown query parameters', async () => {
      assert.equal((await get(server, '/pets?color=red&limit=2')).status, 200)
    })

    it('visits every animal exactly once by following Link rel="next"', async () => {
      const pages = await followPages(`${server.api}/pets?limit=7`)
      const seen = pages.flatMap((page) => page.pets.map((pet) => pet.id))
      assert.equal(pages.length, 7)
      assert.equal(seen.length, 45)
      assert.equal(new Set(seen).size, 45)
      assert.deepEqual(seen, [...seen].sort((a, b) => a - b))
    })

    it('keeps limit and status in the next link, and pages the filtered list', async () => {
      const pages = await followPages(`${server.api}/pets?limit=4&status=pending`)
      for (const page of pages) {
        const parsed = new URL(page.url)
        assert.equal(parsed.searchParams.get('status'), 'pending')
        assert.equal(parsed.searchParams.get('limit'), '4')
      }
      const seen = pages.flatMap((page) => page.pets.map((pet) => pet.status))
      assert.equal(seen.length, 15)
      assert.ok(seen.every((status) => status === 'pending'))
    })

    it('sends no Link on the last page', async () => {
      const response = await get(server, '/pets?limit=100')
      assert.equal(response.headers.get('link'), null)
    })

    it('answers 400 for a tampered, malformed or foreign cursor', async () => {
      const link = nextLink(await get(server, '/pets?limit=2'))!
      const cursor = new URL(link).searchParams.get('cursor')!
      const payload = cursor.split('.')[0]!
      const forged = `${Buffer.from('30:').toString('base64url')}.${cursor.split('.')[1]}`
      for (const bad of [forged, `${payload}.AAAAAAAAAAAAAAAAAAAAAA`, 'garbage', `${cursor}x`, '']) {
        const body = await errorBody(await get(server, `/pets?limit=2&cursor=${encodeURIComponent(bad)}`))
        assert.equal(body.code, 'validation_failed', bad)
        assert.match(body.message, /^cursor: /)
      }
      const otherStatus = await errorBody(await get(server, `/pets?limit=2&status=sold&cursor=${encodeURIComponent(cursor)}`))
      assert.match(otherStatus.message, /^cursor: .*status/)
    })

    it('answers 400 for a cursor spelled otherwise than it was sent, though it decodes to the same bytes', async () => {
      const cursor = new URL(nextLink(await get(server, '/pets?limit=2'))!).searchParams.get('cursor')!
      const [payload, signature] = cursor.split('.') as [string, string]
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
      // The last of 22 characters for 16 bytes carries 2 bits; its 4 low bits are dropped by the decoder.
      const lowBitFlipped = signature.slice(0, -1) + alphabet[alphabet.indexOf(signature.at(-1)!) ^ 1]!
      assert.deepEqual(Buffer.from(lowBitFlipped, 'base64url'), Buffer.from(signature, 'base64url'))
      for (const bad of [`${payload}.${lowBitFlipped}`, `${cursor}=`, `${cursor}==`, `${payload}=.${signature}`, `${payload}.${signature.slice(0, 4)}!${signature.slice(4)}`]) {
        const body = await errorBody(await get(server, `/pets?limit=2&cursor=${encodeURIComponent(bad)}`))
        assert.equal(body.code, 'validation_failed', bad)
      }
      assert.equal((await get(server, `/pets?limit=2&cursor=${encodeURIComponent(cursor)}`)).status, 200)
    })

    it('builds absolute links from PUBLIC_BASE_URL when it is set', async () => {
      const configured = await startTestServer({ backend: backend.name, env: { PUBLIC_BASE_URL: 'https://api.example.com/v1' } })
      try {
        await post(configured, '/pets', { name: 'a', categoryId: 1 })
        const created = await post(configured, '/pets', { name: 'b', categoryId: 1 })
        assert.equal(created.headers.get('location'), 'https://api.example.com/v1/pets/2')
        const link = nextLink(await get(configured, '/pets?limit=1'))!
        assert.match(link, /^https:\/\/api\.example\.com\/v1\/pets\?limit=1&cursor=/)
      } finally {
        await configured.close()
      }
    })
  })
}
