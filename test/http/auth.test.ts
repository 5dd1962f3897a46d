import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { TEST_KEY } from '../support/constants.js'
import { backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'

const REQUESTS: Array<[string, string, string | undefined]> = [
  ['GET', '/pets', undefined],
  ['GET', '/pets?limit=0', undefined],
  ['POST', '/pets', '{"name":'],
  ['POST', '/pets', '{}'],
  ['GET', '/pets/abc', undefined],
  ['GET', '/pets/1', undefined],
  ['DELETE', '/pets', undefined],
  ['GET', '/nowhere', undefined],
  ['GET', '', undefined]
]

for (const backend of backends()) {
  describe(`${backend.name}: authorization on /v1`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    for (const [method, path, body] of REQUESTS) {
      it(`answers 401 before any other check for ${method} /v1${path} without a key`, async () => {
        const response = await fetch(`${server.api}${path}`, { method, body, headers: body === undefined ? {} : { 'content-type': 'application/json' } })
        assert.equal(response.status, 401)
        assert.equal((await errorBody(response)).code, 'unauthorized')
        assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="petstore"')
      })

      it(`answers 401 invalid_token for ${method} /v1${path} with a wrong key`, async () => {
        const response = await fetch(`${server.api}${path}`, { method, body, headers: { authorization: 'Bearer wrong-key-0123456789' } })
        assert.equal(response.status, 401)
        assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="petstore", error="invalid_token"')
      })
    }

    for (const header of ['Basic dGVzdDp0ZXN0', 'Bearer', 'Bearer ', TEST_KEY, `Token ${TEST_KEY}`]) {
      it(`answers 401 for the malformed header "${header.slice(0, 12)}"`, async () => {
        const response = await fetch(`${server.api}/pets`, { headers: { authorization: header } })
        assert.equal(response.status, 401)
      })
    }

    it('takes the scheme word in any case', async () => {
      for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
        assert.equal((await fetch(`${server.api}/pets`, { headers: { authorization: `${scheme} ${TEST_KEY}` } })).status, 200, scheme)
      }
    })

    it('accepts every key PETSTORE_API_KEYS takes, beyond RFC 6750\'s token characters', async () => {
      const keys = ['weird!key#0123456789', 'key"with<all>kinds@of$chars%&*()[]{}|;:?']
      const other = await startTestServer({ database: server.database, env: { PETSTORE_API_KEYS: keys.join(',') } })
      try {
        for (const key of keys) {
          assert.equal((await fetch(`${other.api}/pets`, { headers: { authorization: `Bearer ${key}` } })).status, 200, key)
        }
        assert.equal((await fetch(`${other.api}/pets`, { headers: { authorization: `Bearer ${keys[0]}x` } })).status, 401)
      } finally {
        await other.close()
      }
    })

    it('accepts a key issued into the store, and refuses it once revoked', async () => {
      const key = await issueApiKey(server.store, { name: 'alice' })
      assert.equal((await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${key}` } })).status, 200)
      const fresh = await startTestServer({ database: server.database })
      try {
        assert.ok(await server.store.revokeApiKey('alice'))
        assert.equal((await fetch(`${fresh.api}/pets`, { headers: { authorization: `Bearer ${key}` } })).status, 401)
      } finally {
        await fresh.close()
      }
    })

    it('stores only the SHA-256 of an issued key', async () => {
      const key = await issueApiKey(server.store, { name: 'bob' })
      const records = await server.store.listApiKeys()
      const record = records.find((r) => r.name === 'bob')!
      assert.match(record.keyHash, /^[0-9a-f]{64}$/)
      assert.ok(!JSON.stringify(records).includes(key))
    })

    it('needs no key for the OpenAPI document, the docs and the health endpoints', async () => {
      for (const path of ['/v1/openapi.json', '/v1/openapi.yaml', '/docs', '/healthz', '/readyz', '/readyz/process']) {
        assert.equal((await fetch(`${server.origin}${path}`)).status, 200, path)
      }
    })

    it('never writes a key to the log, wherever the client puts it', async () => {
      const key = await issueApiKey(server.store, { name: 'carol' })
      const auth = { authorization: `Bearer ${key}` }
      await fetch(`${server.api}/pets`, { headers: auth })
      await fetch(`${server.api}/pets?api_key=${key}&token=${key}`, { headers: auth })
      await fetch(`${server.api}/pets/${key}`, { headers: auth })
      await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${key}x` } })
      await fetch(`${server.api}/pets`, { headers: { cookie: `session=${key}`, 'x-api-key': key } })
      await fetch(`${server.api}/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: `{"name":"${key}","categoryId":1,"x":1}` })
      await fetch(`${server.api}/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":' })
      const text = server.logText()
      assert.ok(text.length > 0)
      assert.ok(!text.includes(key), 'the key appears in the log')
      assert.ok(!text.includes(TEST_KEY), 'the configured key appears in the log')
    })
  })
}
