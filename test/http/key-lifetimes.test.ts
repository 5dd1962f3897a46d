import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { issueApiKey, rotateApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'

const GAUGE = 'petstore_api_key_expiry_timestamp_seconds'

async function listWith (server: TestServer, key: string): Promise<Response> {
  return await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${key}` } })
}

/** The gauge's samples on the metrics listener, by key name. */
async function expiries (server: TestServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  return Object.fromEntries([...text.matchAll(new RegExp(`^${GAUGE}\\{key="([^"]+)"\\} (\\S+)$`, 'gm'))].map((m) => [m[1]!, Number(m[2])]))
}

for (const backend of backends()) {
  describe(`${backend.name}: key lifetimes`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    it('answers 401 invalid_token saying when it expired, from the very millisecond, though the verifier had it cached', async () => {
      const expiresAt = new Date(Date.now() + 1_500)
      const key = await issueApiKey(server.store, { name: 'short-lived', lifetime: { expiresAt } })
      assert.equal((await listWith(server, key)).status, 200)
      await sleep(expiresAt.getTime() - Date.now() + 5)
      const refused = await listWith(server, key)
      assert.equal(refused.status, 401)
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="petstore", error="invalid_token"')
      assert.deepEqual(await errorBody(refused), {
        code: 'unauthorized', message: `Authorization: the API key expired at ${expiresAt.toISOString()}; ask for a new one`, status: 401
      })
    })

    it('exports each name\'s current expiring key on the metrics listener, read at each scrape; not retiring, revoked or lasting keys', async () => {
      const expiresAt = new Date('2031-06-01T00:00:00.000Z')
      await issueApiKey(server.store, { name: 'expiring', lifetime: { expiresAt } })
      await issueApiKey(server.store, { name: 'lasting' })
      await issueApiKey(server.store, { name: 'gone', lifetime: { seconds: 3_600 } })
      let seen = await expiries(server)
      assert.equal(seen.expiring, expiresAt.getTime() / 1000)
      assert.equal(seen.lasting, undefined)
      assert.ok(seen.gone! > Date.now() / 1000)
      await server.store.revokeApiKey('gone')
      await issueApiKey(server.store, { name: 'rotated', lifetime: { seconds: 60 } })
      const before = (await expiries(server)).rotated!
      await sleep(1_100)
      await rotateApiKey(server.store, 'rotated', 3_600)
      seen = await expiries(server)
      assert.equal(seen.gone, undefined, 'revoked')
      assert.ok(seen.rotated! > before, 'the current key\'s expiry, not the retiring one\'s')
      const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
      assert.equal(text.match(/petstore_api_key_expiry_timestamp_seconds\{key="rotated"\}/g)?.length, 1)
    })
  })
}
