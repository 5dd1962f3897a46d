import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { backends, errorBody, get, startTestServer, type TestServer, useTwoInstances } from '../support/helper.js'
import { proxyToRedis, redisSettings, redisSkip } from '../support/redis.js'

const OTHER_KEY = 'other-key-0123456789abcdef'
const KEYS = `${TEST_KEY},${OTHER_KEY}`

/** The headers of earlier RateLimit drafts, which must not be sent beside the current ones. */
function olderDraftHeaders (response: Response): string[] {
  return [...response.headers.keys()].filter((name) => /^(x-)?ratelimit-(limit|remaining|reset)$/.test(name))
}

for (const backend of backends()) {
  describe(`${backend.name}: rate limit per API key (RATE_LIMIT=5)`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name, env: { RATE_LIMIT: '5', PETSTORE_API_KEYS: KEYS } }) })
    after(async () => { await server.close() })

    it('sends RateLimit-Policy and RateLimit on every authenticated response, counting down', async () => {
      for (let remaining = 4; remaining >= 0; remaining--) {
        const response = await get(server, '/pets')
        assert.equal(response.status, 200)
        assert.equal(response.headers.get('ratelimit-policy'), '"default";q=5;w=60')
        assert.match(response.headers.get('ratelimit') ?? '', new RegExp(`^"default";r=${remaining};t=([1-9]|[1-5][0-9]|60)$`))
        assert.deepEqual(olderDraftHeaders(response), [])
      }
    })

    it('answers 429 rate_limited with Retry-After and the Error body past the quota', async () => {
      const response = await get(server, '/pets')
      assert.equal(response.status, 429)
      const retryAfter = Number(response.headers.get('retry-after'))
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)
      assert.match(response.headers.get('ratelimit') ?? '', /^"default";r=0;t=\d+$/)
      assert.deepEqual(olderDraftHeaders(response), [])
      assert.equal((await errorBody(response)).code, 'rate_limited')
      assert.equal((await get(server, '/pets/1')).status, 429, 'every operation counts')
    })

    it('counts each API key apart', async () => {
      const response = await get(server, '/pets', { authorization: `Bearer ${OTHER_KEY}` })
      assert.equal(response.status, 200)
      assert.match(response.headers.get('ratelimit') ?? '', /^"default";r=4;/)
    })

    it('neither counts nor labels requests without a valid key', async () => {
      const response = await fetch(`${server.api}/pets`, { headers: { authorization: 'Bearer wrong-key-0123456789' } })
      assert.equal(response.status, 401)
      assert.equal(response.headers.get('ratelimit'), null)
      assert.equal((await fetch(`${server.origin}/healthz`)).headers.get('ratelimit'), null)
    })
  })
}

for (const backend of backends()) {
  describe(`${backend.name}: rate limit off (RATE_LIMIT=0)`, { skip: backend.skip }, () => {
    it('sends no RateLimit headers and never answers 429', async () => {
      const server = await startTestServer({ backend: backend.name, env: { RATE_LIMIT: '0' } })
      try {
        for (let i = 0; i < 20; i++) {
          const response = await get(server, '/pets')
          assert.equal(response.status, 200)
          assert.equal(response.headers.get('ratelimit'), null)
        }
      } finally {
        await server.close()
      }
    })
  })
}

describe('rate limit shared through Redis', { skip: redisSkip('Redis rate-limit tests') }, () => {
  for (const backend of backends()) {
    describe(backend.name, { skip: backend.skip }, () => {
      const instances = useTwoInstances(backend.name, { RATE_LIMIT: '6', ...redisSettings() })

      it('counts the requests of two instances together', async () => {
        const { one, two } = instances
        const statuses: number[] = []
        for (const server of [one, two, one, two, one, two]) statuses.push((await get(server, '/pets')).status)
        assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200])
        const last = await get(two, '/pets')
        assert.match(last.headers.get('ratelimit') ?? '', /^"default";r=0;/)
        assert.equal(last.status, 429)
        assert.equal((await get(one, '/pets')).status, 429)
      })

      it('counts per process while Redis is cut off, warning once with the request id, and in Redis again once it is back', async () => {
        const proxy = await proxyToRedis()
        const server = await startTestServer({ backend: backend.name, env: { RATE_LIMIT: '100', ...redisSettings(proxy) } })
        const remaining = (response: Response): number => Number(/;r=(\d+);/.exec(response.headers.get('ratelimit') ?? '')?.[1])
        try {
          const outages = (): Array<Record<string, unknown>> => server.logs().filter((line) => line.msg === 'requests for the rate limit are counted per process: Redis does not answer')
          const counted = new Set<number>()
          for (let i = 0; i < 60; i++) {
            const response = await get(server, '/pets')
            assert.equal(response.status, 200)
            counted.add(remaining(response))
          }
          // A Redis answer slower than its 250 ms timeout (a loaded machine) is counted here, with its own warning.
          const blips = outages().length
          proxy.cut()
          const away = await get(server, '/pets')
          assert.equal(away.status, 200, 'served, not a 500, while Redis is away')
          if (blips === 0) assert.equal(remaining(away), 99, 'counted from 1 in this process')
          else assert.ok(remaining(away) < 99 && counted.size < 60, `counted in this process after ${60 - counted.size} requests counted here before`)
          const warnings = outages().slice(blips)
          assert.equal(warnings.length, 1)
          assert.equal(warnings[0]!.requestId, away.headers.get('x-request-id'))
          proxy.restore()
          // This process's count would need 61 more requests to reach what Redis holds.
          let left = 100
          for (let i = 0; i < 50 && left > 39; i++) {
            await sleep(100)
            left = remaining(await get(server, '/pets'))
          }
          assert.ok(left <= 39, `the count in Redis applies again after reconnecting (r=${left})`)
        } finally {
          await server.close()
          await proxy.close()
        }
      })

      it('counts per process with one warning when Redis is unreachable from the start', async () => {
        const server = await startTestServer({ backend: backend.name, env: { RATE_LIMIT: '2', REDIS_URL: 'redis://127.0.0.1:1' } })
        try {
          assert.deepEqual([(await get(server, '/pets')).status, (await get(server, '/pets')).status, (await get(server, '/pets')).status], [200, 200, 429])
          const warnings = server.logs().filter((line) => line.level === 40 && /Redis/.test(String(line.msg)))
          assert.equal(warnings.length, 1, 'one warning, not one a request')
          assert.match(String(warnings[0]!.msg), /rate limits and failed authentications are counted per process/)
        } finally {
          await server.close()
        }
      })
    })
  }
})
