import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import type { Store } from '../../src/store/store.js'
import { backends, createTestDatabase, startTestServer, type TestDatabase, type TestServer, useTwoInstances } from '../support/helper.js'
import { redisSettings, redisSkip } from '../support/redis.js'

async function listWith (server: TestServer, key: string): Promise<Response> {
  const response = await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${key}` } })
  await response.arrayBuffer()
  return response
}

/** Counts the store's writes of last uses from now on; the app holds the very same store object. */
function countUseWrites (store: Store): () => number {
  let writes = 0
  const record = store.recordApiKeyUses.bind(store)
  store.recordApiKeyUses = async (uses) => {
    writes++
    await record(uses)
  }
  return () => writes
}

async function lastUsedAt (store: Store, name: string): Promise<string | null> {
  return (await store.listApiKeys()).find((record) => record.name === name)!.lastUsedAt?.toISOString() ?? null
}

for (const backend of backends()) {
  describe(`${backend.name}: a key's own rate limit, shared through Redis by two instances`, {
    skip: backend.skip || redisSkip('Redis key-limit tests')
  }, () => {
    // RATE_LIMIT=0: the server's limit is off, a key's own limit still holds.
    const instances = useTwoInstances(backend.name, { RATE_LIMIT: '0', ...redisSettings() })

    it('limits a key with --rate-limit 3 across both instances, with that quota in its headers, though RATE_LIMIT=0', async () => {
      const { one, two } = instances
      const key = await issueApiKey(one.store, { name: 'limited', rateLimit: 3 })
      const answers = [await listWith(one, key), await listWith(two, key), await listWith(one, key), await listWith(two, key)]
      assert.deepEqual(answers.map((response) => response.status), [200, 200, 200, 429])
      assert.equal(answers[0]!.headers.get('ratelimit-policy'), '"default";q=3;w=60')
      assert.match(answers[1]!.headers.get('ratelimit') ?? '', /^"default";r=1;t=\d+$/)
    })

    it('gives a key with --rate-limit 0 no limit and no headers', async () => {
      const { one, two } = instances
      const key = await issueApiKey(one.store, { name: 'unlimited', rateLimit: 0 })
      for (let i = 0; i < 5; i++) {
        const response = await listWith(i % 2 === 0 ? one : two, key)
        assert.equal(response.status, 200)
        assert.equal(response.headers.get('ratelimit'), null)
      }
    })
  })

  describe(`${backend.name}: a key's last use`, { skip: backend.skip }, () => {
    let database: TestDatabase
    before(async () => { database = await createTestDatabase(backend.name) })
    after(async () => { await database?.drop() })

    it('is written at first sight, then not at each request, and the latest one at shutdown', async () => {
      const server = await startTestServer({ database })
      const writes = countUseWrites(server.store)
      const key = await issueApiKey(server.store, { name: 'used' })
      const firstSeen = Date.now()
      await listWith(server, key)
      let first: string | null = null
      for (let i = 0; i < 40 && first === null; i++) {
        await sleep(100)
        first = await lastUsedAt(server.store, 'used')
      }
      assert.ok(first !== null && Date.parse(first) >= firstSeen - 1, `written at first sight: ${first}`)
      for (let i = 0; i < 50; i++) await listWith(server, key)
      await sleep(1_200)
      assert.equal(writes(), 1, 'one write, however many requests')
      assert.equal(await lastUsedAt(server.store, 'used'), first)
      const latest = Date.now()
      await listWith(server, key)
      await server.app.close()
      assert.ok(Date.parse((await lastUsedAt(server.store, 'used'))!) >= latest - 1, 'the latest use, written at close')
      await server.close()
    })

    it('never moves back when two instances write it', async () => {
      const [one, two] = await Promise.all([startTestServer({ database }), startTestServer({ database })])
      const key = await issueApiKey(one.store, { name: 'shared' })
      await listWith(one, key)
      await sleep(50)
      const later = Date.now()
      await listWith(two, key)
      await two.close()
      await one.close()
      const reopened = await startTestServer({ database })
      try {
        assert.ok(Date.parse((await lastUsedAt(reopened.store, 'shared'))!) >= later - 1)
      } finally {
        await reopened.close()
      }
    })
  })
}
