import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { FAILED_AUTH_LIMIT } from '../../src/domain/failed-authentications.js'
import type { Store } from '../../src/store/store.js'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, backends, errorBody, startTestServer, type TestServer, useTwoInstances } from '../support/helper.js'
import { redisSettings, redisSkip } from '../support/redis.js'
import { tallyStatuses } from '../support/status-tally.js'

const FLOOD = 3_000
// Requests in flight at once: each may pass the count before the failures ahead of it are added.
const IN_FLIGHT = 8

/** Counts the store's key lookups from now on; the app holds the very same store object. */
function countKeyLookups (store: Store): () => number {
  let calls = 0
  const find = store.findApiKeyByHash.bind(store)
  store.findApiKeyByHash = async (keyHash) => {
    calls++
    return await find(keyHash)
  }
  return () => calls
}

function forgedKey (): string {
  return `ps_${randomBytes(32).toString('base64url')}`
}

async function getPets (server: TestServer, key: string | undefined, from: string): Promise<Response> {
  const headers: Record<string, string> = { 'x-forwarded-for': from }
  if (key !== undefined) headers.authorization = `Bearer ${key}`
  return await fetch(`${server.api}/pets`, { headers })
}

async function throttledCount (server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  return Number(/^petstore_auth_throttled_total (\d+)$/m.exec(text)?.[1])
}

for (const backend of backends()) {
  describe(`${backend.name}: forged keys are throttled per client address (TRUST_PROXY=127.0.0.1)`, { skip: backend.skip }, () => {
    let server: TestServer
    // Admission off: the flood's client shares this process's event loop, and beside a busy neighbour one turn of
    // both ran 114 ms of CPU (221 ms late, 122 ms of it waiting for a core), work no one service has.
    before(async () => {
      server = await startTestServer({ backend: backend.name, env: { TRUST_PROXY: '127.0.0.1', MAX_QUEUE_DELAY: 'off' } })
    })
    after(async () => { await server.close() })

    // The throttle answers before any store: one backend carries the whole flood, the other a tenth, to stay quick.
    const requests = backend.name === 'sqlite' ? FLOOD : FLOOD / 10
    it(`answers ${requests} forged keys from one address 401, then 429 before any lookup, while other addresses are served`, async (t) => {
      const issued = await issueApiKey(server.store, { name: 'neighbour' })
      assert.equal((await getPets(server, issued, '198.51.100.1')).status, 200, 'a store key known before the flood')
      const lookups = countKeyLookups(server.store)
      const bystanders: number[] = []
      const statuses = await tallyStatuses(requests, IN_FLIGHT, async (i) => {
        if (i % 100 === 0) bystanders.push((await getPets(server, i % 200 === 0 ? TEST_KEY : issued, '198.51.100.2')).status)
        return await getPets(server, forgedKey(), '198.51.100.1')
      })
      assert.deepEqual(Object.keys(statuses).sort(), ['401', '429'])
      t.diagnostic(`${statuses[401]} × 401, ${statuses[429]} × 429, ${lookups()} store lookups`)
      assert.ok(statuses[401]! >= FAILED_AUTH_LIMIT && statuses[401]! <= FAILED_AUTH_LIMIT + IN_FLIGHT, `401s: ${statuses[401]}`)
      assert.equal(statuses[401]! + statuses[429]!, requests)
      assert.ok(lookups() <= FAILED_AUTH_LIMIT + IN_FLIGHT + 1, `store lookups: ${lookups()}`)
      assert.ok(bystanders.every((status) => status === 200), `another address: ${bystanders.join()}`)
      assert.equal(await throttledCount(server), statuses[429])

      const refused = await getPets(server, forgedKey(), '198.51.100.1')
      assert.equal(refused.status, 429)
      const retryAfter = Number(refused.headers.get('retry-after'))
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
      assert.equal(refused.headers.get('www-authenticate'), null)
      const body = await errorBody(refused)
      assert.equal(body.code, 'rate_limited')
      assert.match(body.message, new RegExp(`at most ${FAILED_AUTH_LIMIT} failed authentications a minute`))
    })

    it('still serves known valid keys from the throttled address, and still challenges a request without a key', async () => {
      assert.equal((await getPets(server, TEST_KEY, '198.51.100.1')).status, 200, 'a configured key')
      const response = await getPets(server, undefined, '198.51.100.1')
      assert.equal(response.status, 401)
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="petstore"')
      const fresh = await issueApiKey(server.store, { name: 'never-seen' })
      assert.equal((await getPets(server, fresh, '198.51.100.1')).status, 429, 'a key not yet known is no exception')
      assert.equal((await getPets(server, fresh, '198.51.100.3')).status, 200)
    })

    it('asks the store once for a forged key sent again', async () => {
      const lookups = countKeyLookups(server.store)
      const key = forgedKey()
      for (let i = 0; i < 5; i++) assert.equal((await getPets(server, key, '198.51.100.4')).status, 401)
      assert.equal(lookups(), 1)
    })

    it('counts an IPv6 address by its /64, and an IPv4-mapped one as IPv4', async () => {
      for (let i = 0; i < FAILED_AUTH_LIMIT; i++) assert.equal((await getPets(server, forgedKey(), `2001:db8:1:2::${i + 1}`)).status, 401)
      assert.equal((await getPets(server, forgedKey(), '2001:db8:1:2:ffff:ffff:ffff:ffff')).status, 429, 'the same /64')
      assert.equal((await getPets(server, forgedKey(), '2001:db8:1:3::1')).status, 401, 'the next /64')
      for (let i = 0; i < FAILED_AUTH_LIMIT; i++) assert.equal((await getPets(server, forgedKey(), '::ffff:203.0.113.5')).status, 401)
      assert.equal((await getPets(server, forgedKey(), '203.0.113.5')).status, 429)
    })

    it('takes the nearest X-Forwarded-For address that is no trusted proxy, whatever the client prepends', async () => {
      for (let i = 0; i < FAILED_AUTH_LIMIT; i++) assert.equal((await getPets(server, forgedKey(), `10.9.9.${i}, 192.0.2.9`)).status, 401)
      assert.equal((await getPets(server, forgedKey(), '10.1.1.1, 192.0.2.9')).status, 429)
    })
  })

  describe(`${backend.name}: forged keys without TRUST_PROXY`, { skip: backend.skip }, () => {
    it('counts the peer, whatever X-Forwarded-For says', async () => {
      const server = await startTestServer({ backend: backend.name })
      try {
        for (let i = 0; i < FAILED_AUTH_LIMIT; i++) assert.equal((await getPets(server, forgedKey(), `192.0.2.${i}`)).status, 401)
        assert.equal((await getPets(server, forgedKey(), '192.0.2.200')).status, 429)
        assert.equal((await fetch(`${server.api}/pets`, { headers: AUTH })).status, 200)
      } finally {
        await server.close()
      }
    })

    it('keeps the links on PUBLIC_BASE_URL whatever a trusted proxy forwards', async () => {
      const server = await startTestServer({ backend: backend.name, env: { TRUST_PROXY: '127.0.0.1', PUBLIC_BASE_URL: 'https://api.example.com/v1' } })
      try {
        const forwarded = { ...AUTH, 'x-forwarded-for': '192.0.2.1', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', 'content-type': 'application/json' }
        const created = await fetch(`${server.api}/pets`, { method: 'POST', headers: forwarded, body: '{"name":"Rex","categoryId":1}' })
        assert.equal(created.status, 201)
        assert.match(created.headers.get('location') ?? '', /^https:\/\/api\.example\.com\/v1\/pets\/\d+$/)
        await fetch(`${server.api}/pets`, { method: 'POST', headers: forwarded, body: '{"name":"Max","categoryId":1}' })
        const page = await fetch(`${server.api}/pets?limit=1`, { headers: forwarded })
        assert.match(page.headers.get('link') ?? '', /^<https:\/\/api\.example\.com\/v1\/pets\?/)
      } finally {
        await server.close()
      }
    })
  })
}

describe('forged keys counted through Redis', { skip: redisSkip('Redis forged-key tests') }, () => {
  for (const backend of backends()) {
    describe(backend.name, { skip: backend.skip }, () => {
      const instances = useTwoInstances(backend.name, { TRUST_PROXY: '127.0.0.1', ...redisSettings() })

      it('throttles forgeries split between two instances at the shared limit', async () => {
        const { one, two } = instances
        for (let i = 0; i < FAILED_AUTH_LIMIT; i++) assert.equal((await getPets(i % 2 === 0 ? one : two, forgedKey(), '198.51.100.7')).status, 401)
        assert.equal((await getPets(one, forgedKey(), '198.51.100.7')).status, 429)
        assert.equal((await getPets(two, forgedKey(), '198.51.100.7')).status, 429)
        assert.equal((await getPets(two, TEST_KEY, '198.51.100.7')).status, 200)
        assert.equal((await getPets(one, forgedKey(), '198.51.100.8')).status, 401, 'another address')
      })

      it('counts per process, with one warning, when Redis is unreachable', async () => {
        const server = await startTestServer({ backend: backend.name, env: { REDIS_URL: 'redis://127.0.0.1:1' } })
        try {
          for (let i = 0; i < FAILED_AUTH_LIMIT; i++) assert.equal((await getPets(server, forgedKey(), '192.0.2.1')).status, 401)
          assert.equal((await getPets(server, forgedKey(), '192.0.2.1')).status, 429)
          const warnings = server.logs().filter((line) => line.level === 40 && /failed authentications/.test(String(line.msg)))
          assert.equal(warnings.length, 1)
        } finally {
          await server.close()
        }
      })
    })
  }
})
