import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backends, post, type TestServer, useTwoInstances } from '../support/helper.js'
import { followPages, listAll } from '../support/list-pages.js'

const CREATES = 100

async function listedIds (server: TestServer): Promise<number[]> {
  return (await listAll(`${server.api}/pets?limit=100`)).map((pet) => pet.id)
}

// Two instances on one database, as behind a load balancer.
for (const backend of backends()) {
  describe(`${backend.name}: two instances on one database`, { skip: backend.skip }, () => {
    const instances = useTwoInstances(backend.name)
    const created: number[] = []

    it(`answers 201 with unique ids to ${CREATES} creates sent through both at once`, async () => {
      const { one, two } = instances
      const responses = await Promise.all(Array.from({ length: CREATES }, async (_, i) =>
        await post(i % 2 === 0 ? one : two, '/pets', { name: `pet ${i}`, categoryId: i + 1 })))
      assert.deepEqual(responses.filter((r) => r.status !== 201).map((r) => r.status), [])
      created.push(...await Promise.all(responses.map(async (r) => (await r.json() as { id: number }).id)))
      assert.equal(new Set(created).size, CREATES)
    })

    it('lists every animal once, whichever instance is asked', async () => {
      const { one, two } = instances
      for (const server of [one, two]) assert.deepEqual(await listedIds(server), [...created].sort((a, b) => a - b))
    })

    it('continues on one instance the cursor paging begun on the other', async () => {
      const { one, two } = instances
      // Alternate instances: the cursor is signed with a secret both read from the database.
      const origin = (index: number): string => (index % 2 === 0 ? one : two).origin
      const pages = await followPages(`${one.api}/pets?limit=7`, { origin })
      assert.deepEqual(pages.map((page) => new URL(page.url).origin), pages.map((_, index) => origin(index)))
      assert.deepEqual(pages.flatMap((page) => page.pets.map((pet) => pet.id)), [...created].sort((a, b) => a - b))
    })

    it('creates one animal when the same Idempotency-Key reaches both instances at once', async () => {
      const { one, two } = instances
      const body = { name: 'once', categoryId: 42 }
      for (let round = 0; round < 5; round++) {
        const headers = { 'idempotency-key': `both-${round}` }
        const responses = await Promise.all([post(one, '/pets', body, headers), post(two, '/pets', body, headers)])
        // The second is either replayed (it waited for the first) or told the first is in flight.
        const statuses = responses.map((r) => r.status).sort()
        assert.ok(statuses.every((s) => s === 201 || s === 409), `statuses ${statuses.join()}`)
        const ids = await Promise.all(responses.filter((r) => r.status === 201).map(async (r) => (await r.json() as { id: number }).id))
        assert.equal(new Set(ids).size, 1, 'the same animal from both')
        created.push(ids[0]!)
      }
      assert.deepEqual(await listedIds(two), [...created].sort((a, b) => a - b))
    })
  })
}
