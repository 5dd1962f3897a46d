import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { NewApiKeyRecord } from '../../src/store/store.js'
import { backends, useTestStore } from '../support/helper.js'

const key = (name: string, keyHash: string): NewApiKeyRecord =>
  ({ name, keyHash, scopes: ['pets:read'], expiresAt: new Date('2031-01-02T03:04:05.000Z'), lifetimeSeconds: null, rateLimit: 7 })

for (const backend of backends()) {
  describe(`${backend.name}: the store's API keys`, { skip: backend.skip }, () => {
    const fixture = useTestStore(backend.name)

    it('keeps scopes, expiry and rate limit, and one current key per name', async () => {
      const record = await fixture.store.insertApiKey(key('ci', 'a'.repeat(64)))
      assert.deepEqual(record?.scopes, ['pets:read'])
      assert.equal(record?.expiresAt, '2031-01-02T03:04:05.000Z')
      assert.equal(record?.rateLimit, 7)
      assert.equal(record?.retiresAt, null)
      assert.equal(await fixture.store.insertApiKey(key('ci', 'b'.repeat(64))), undefined)
    })

    it('rotates: the new key copies scopes and limit, the old retires at the grace, a retiring one ends at once', async () => {
      const at = new Date('2030-01-01T00:00:00.000Z')
      const graceEndsAt = new Date('2030-01-02T00:00:00.000Z')
      const first = await fixture.store.rotateApiKey('ci', { keyHash: 'c'.repeat(64), at, graceEndsAt, expiresAt: (replaced) => new Date(replaced.expiresAt!) })
      assert.equal(first?.keyHash, 'c'.repeat(64))
      assert.deepEqual([first?.scopes, first?.rateLimit, first?.expiresAt], [['pets:read'], 7, '2031-01-02T03:04:05.000Z'])
      assert.equal((await fixture.store.findApiKeyByHash('a'.repeat(64)))?.retiresAt, graceEndsAt.toISOString())
      await fixture.store.rotateApiKey('ci', { keyHash: 'd'.repeat(64), at: new Date('2030-01-01T01:00:00.000Z'), graceEndsAt, expiresAt: () => null })
      const byHash = new Map((await fixture.store.listApiKeys()).filter((r) => r.name === 'ci').map((r) => [r.keyHash[0], r.retiresAt]))
      assert.deepEqual(Object.fromEntries(byHash), { a: '2030-01-01T01:00:00.000Z', c: graceEndsAt.toISOString(), d: null })
    })

    it('revokes every key of a name, and a revoked name cannot be rotated', async () => {
      assert.equal(await fixture.store.revokeApiKey('ci'), true)
      assert.ok((await fixture.store.listApiKeys()).filter((r) => r.name === 'ci').every((r) => r.revokedAt !== null))
      assert.equal(await fixture.store.revokeApiKey('ci'), false)
      assert.equal(await fixture.store.rotateApiKey('ci', { keyHash: 'e'.repeat(64), at: new Date(), graceEndsAt: new Date(), expiresAt: () => null }), undefined)
    })

    it('records last uses in one batch, never moving one back', async () => {
      await fixture.store.insertApiKey(key('used', 'f'.repeat(64)))
      await fixture.store.recordApiKeyUses([{ keyHash: 'f'.repeat(64), at: new Date('2030-05-05T00:00:00.000Z') }])
      await fixture.store.recordApiKeyUses([{ keyHash: 'f'.repeat(64), at: new Date('2030-05-04T00:00:00.000Z') }, { keyHash: '0'.repeat(64), at: new Date() }])
      assert.equal((await fixture.store.findApiKeyByHash('f'.repeat(64)))?.lastUsedAt, '2030-05-05T00:00:00.000Z')
    })
  })
}
