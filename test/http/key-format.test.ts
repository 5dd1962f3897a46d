import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { hashApiKey } from '../../src/domain/api-keys/format.js'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { FAILED_AUTH_LIMIT } from '../../src/domain/failed-authentications.js'
import { ROOT } from '../support/constants.js'
import { backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'

// The expression docs/api-keys.md gives secret scanners, read from the page itself.
const SCANNER = new RegExp(/`(\\bpetstore_api_[^`]+)`/.exec(readFileSync(join(ROOT, 'docs/api-keys.md'), 'utf8'))![1]!, 'g')

function withWrongChecksum (key: string): string {
  return `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`
}

for (const backend of backends()) {
  describe(`${backend.name}: the key format`, { skip: backend.skip }, () => {
    let server: TestServer
    let lookups = 0
    before(async () => {
      server = await startTestServer({ backend: backend.name, env: { TRUST_PROXY: '127.0.0.1' } })
      const find = server.store.findApiKeyByHash.bind(server.store)
      server.store.findApiKeyByHash = async (keyHash) => {
        lookups++
        return await find(keyHash)
      }
    })
    after(async () => { await server.close() })

    it('issues keys the scanners\' expression finds, in text too, and never matching a key of the old ps_ shape', async () => {
      const key = await issueApiKey(server.store, { name: 'scanned' })
      assert.deepEqual(`token: "${key}",\nother ps_${randomBytes(32).toString('base64url')}`.match(SCANNER), [key])
      assert.equal((await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${key}` } })).status, 200)
    })

    it('refuses a key of the shape with a wrong checksum with 401 before any store lookup, as a failed authentication', async () => {
      const key = withWrongChecksum(await issueApiKey(server.store, { name: 'mistyped' }))
      const before = lookups
      const from = { authorization: `Bearer ${key}`, 'x-forwarded-for': '198.51.100.9' }
      const refused = await fetch(`${server.api}/pets`, { headers: from })
      assert.equal(refused.status, 401)
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="petstore", error="invalid_token"')
      assert.equal((await errorBody(refused)).message, 'Authorization: the API key is malformed (its checksum does not match); copy it again, whole')
      for (let i = 1; i < FAILED_AUTH_LIMIT; i++) await (await fetch(`${server.api}/pets`, { headers: from })).arrayBuffer()
      assert.equal((await fetch(`${server.api}/pets`, { headers: from })).status, 429, 'counted by the throttle of forged keys')
      assert.equal(lookups, before, 'no store lookup')
    })

    it('keeps keys issued before the new format working', async () => {
      const legacy = `ps_${randomBytes(32).toString('base64url')}`
      await server.store.insertApiKey({ name: 'legacy', keyHash: hashApiKey(legacy), scopes: ['pets:read', 'pets:write'], createdAt: new Date(), expiresAt: null, lifetimeSeconds: null, rateLimit: null })
      assert.equal((await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${legacy}` } })).status, 200)
    })

    it('never echoes a key of either shape as the request id', async () => {
      const issued = await issueApiKey(server.store, { name: 'echoed' })
      for (const key of [issued, withWrongChecksum(issued), `ps_${randomBytes(32).toString('base64url')}`]) {
        const response = await fetch(`${server.origin}/healthz`, { headers: { 'x-request-id': key } })
        assert.notEqual(response.headers.get('x-request-id'), key)
      }
      assert.equal((await fetch(`${server.origin}/healthz`, { headers: { 'x-request-id': 'order-42' } })).headers.get('x-request-id'), 'order-42')
    })
  })
}
