import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { issueApiKey, rotateApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { backends, errorBody, type TestServer, useTwoInstances } from '../support/helper.js'

// The verifier's cache window, and a margin: what "every instance within 5 s" allows.
const CACHE_WINDOW_MS = 5_000 + 1_500

async function call (server: TestServer, key: string, method = 'GET', path = '/pets', body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(`${server.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
}

/** The first answer of `server` to `key` that is not 200, waiting at most the cache window. */
async function refusalWithin (server: TestServer, key: string): Promise<Response> {
  const deadline = Date.now() + CACHE_WINDOW_MS
  for (;;) {
    const response = await call(server, key)
    if (response.status !== 200 || Date.now() > deadline) return response
    await response.arrayBuffer()
    await sleep(100)
  }
}

// Two instances on one database, as behind a load balancer.
for (const backend of backends()) {
  describe(`${backend.name}: rotation and revocation on two instances`, { skip: backend.skip }, () => {
    const instances = useTwoInstances(backend.name)

    it('keeps the old key working through the grace on both, then answers 401 saying it was replaced', async () => {
      const { one, two } = instances
      const old = await issueApiKey(one.store, { name: 'rotating' })
      assert.equal((await call(one, old)).status, 200)
      assert.equal((await call(two, old)).status, 200)
      const next = await rotateApiKey(one.store, 'rotating', 2)
      for (const server of [one, two]) {
        assert.equal((await call(server, next)).status, 200)
        assert.equal((await call(server, old)).status, 200, 'within the grace')
      }
      for (const server of [one, two]) {
        const refused = await refusalWithin(server, old)
        assert.equal(refused.status, 401)
        assert.match((await errorBody(refused)).message, /^Authorization: the API key was replaced by a rotation, and its grace ended at \S+Z; use the new key$/)
        assert.equal((await call(server, next)).status, 200)
      }
    })

    it('ends a key still retiring at the next rotation, on both instances within the cache window', async () => {
      const { one, two } = instances
      const first = await issueApiKey(one.store, { name: 'twice' })
      const second = await rotateApiKey(one.store, 'twice', 3_600)
      assert.equal((await call(two, first)).status, 200)
      const third = await rotateApiKey(two.store, 'twice', 3_600)
      for (const server of [one, two]) {
        assert.equal((await refusalWithin(server, first)).status, 401)
        assert.equal((await call(server, second)).status, 200, 'now the retiring key')
        assert.equal((await call(server, third)).status, 200)
      }
    })

    it('revokes both keys of a name on both instances within the cache window', async () => {
      const { one, two } = instances
      const old = await issueApiKey(one.store, { name: 'revoked' })
      const next = await rotateApiKey(one.store, 'revoked', 3_600)
      for (const server of [one, two]) for (const key of [old, next]) assert.equal((await call(server, key)).status, 200)
      assert.ok(await two.store.revokeApiKey('revoked'))
      for (const server of [one, two]) {
        for (const key of [old, next]) {
          const refused = await refusalWithin(server, key)
          assert.deepEqual(await errorBody(refused), { code: 'unauthorized', message: 'Authorization: the API key is unknown or revoked', status: 401 })
        }
      }
    })

    it('replays a create retried with the new key: the Idempotency-Key belongs to the name', async () => {
      const { one, two } = instances
      const old = await issueApiKey(one.store, { name: 'retrying' })
      const first = await call(one, old, 'POST', '/pets', { name: 'Rex', categoryId: 1 }, { 'idempotency-key': 'order-1' })
      assert.equal(first.status, 201)
      const next = await rotateApiKey(one.store, 'retrying', 3_600)
      const retried = await call(two, next, 'POST', '/pets', { name: 'Rex', categoryId: 1 }, { 'idempotency-key': 'order-1' })
      assert.equal(retried.status, 201)
      assert.equal(retried.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(await retried.json(), await first.json())
    })

    it('counts both keys of a name against one quota, and its deprecated calls under the name', async () => {
      const { one } = instances
      const old = await issueApiKey(one.store, { name: 'metered', rateLimit: 3 })
      assert.equal((await call(one, old)).status, 200)
      assert.equal((await call(one, old, 'GET', '/pets/999999')).status, 404)
      const next = await rotateApiKey(one.store, 'metered', 3_600)
      assert.equal((await call(one, next, 'GET', '/pets/999999')).status, 404)
      const over = await call(one, next)
      assert.equal(over.status, 429, 'the grace gives no second quota')
      assert.equal(over.headers.get('ratelimit-policy'), '"default";q=3;w=60')
      const text = await (await fetch(`${one.metrics.origin}/metrics`)).text()
      assert.match(text, /^petstore_deprecated_calls_total\{operation="getPet",key="metered"\} 2$/m)
    })
  })
}
