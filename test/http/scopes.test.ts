import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { TEST_KEY } from '../support/constants.js'
import { backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'

const READ_ONLY_KEY = 'read-only-key-0123456789'
const CREATE = { name: 'Rex', categoryId: 1 }
const LACKS_WRITE = 'Bearer realm="petstore", error="insufficient_scope", scope="pets:write"'

async function call (server: TestServer, key: string, method: string, path: string, body?: string): Promise<Response> {
  return await fetch(`${server.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body
  })
}

for (const backend of backends()) {
  describe(`${backend.name}: scopes`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer({ backend: backend.name, env: { PETSTORE_READ_ONLY_KEYS: READ_ONLY_KEY, RATE_LIMIT: '100' } })
    })
    after(async () => { await server.close() })

    it('lets a key of PETSTORE_READ_ONLY_KEYS list and get, and answers createPet 403 insufficient_scope with the challenge', async () => {
      assert.equal((await call(server, READ_ONLY_KEY, 'GET', '/pets')).status, 200)
      assert.equal((await call(server, READ_ONLY_KEY, 'GET', '/pets/1')).status, 404)
      const refused = await call(server, READ_ONLY_KEY, 'POST', '/pets', JSON.stringify(CREATE))
      assert.equal(refused.status, 403)
      assert.equal(refused.headers.get('www-authenticate'), LACKS_WRITE)
      assert.deepEqual(await errorBody(refused), { code: 'insufficient_scope', message: 'Authorization: this API key lacks pets:write, which createPet needs', status: 403 })
      assert.equal((await call(server, TEST_KEY, 'POST', '/pets', JSON.stringify(CREATE))).status, 201, 'PETSTORE_API_KEYS keeps both scopes')
    })

    it('decides the 403 before the body is read or checked, and leaves 404 and 405 as they were', async () => {
      const key = await issueApiKey(server.store, { name: 'reader-checks', scopes: ['pets:read'] })
      for (const body of ['{"name":', '{"name":1}', '']) assert.equal((await call(server, key, 'POST', '/pets', body)).status, 403, body)
      assert.equal((await call(server, key, 'GET', '/nowhere')).status, 404)
      assert.equal((await call(server, key, 'DELETE', '/pets')).status, 405)
    })

    it('counts a 403 against the key\'s rate limit, with the RateLimit headers', async () => {
      const key = await issueApiKey(server.store, { name: 'reader-counted', scopes: ['pets:read'], rateLimit: 3 })
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) {
        const response = await call(server, key, 'POST', '/pets', JSON.stringify(CREATE))
        statuses.push(response.status)
        assert.match(response.headers.get('ratelimit') ?? '', /^"default";r=\d+;t=\d+$/)
      }
      assert.deepEqual(statuses, [403, 403, 403, 429])
    })

    it('gives a stored key only its scopes: pets:write alone creates but cannot list', async () => {
      const key = await issueApiKey(server.store, { name: 'writer', scopes: ['pets:write'] })
      assert.equal((await call(server, key, 'POST', '/pets', JSON.stringify(CREATE))).status, 201)
      const refused = await call(server, key, 'GET', '/pets')
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="petstore", error="insufficient_scope", scope="pets:read"')
      assert.deepEqual(await errorBody(refused), { code: 'insufficient_scope', message: 'Authorization: this API key lacks pets:read, which listPets needs', status: 403 })
    })
  })
}
