import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { NewApiKeyRecord } from '../../src/store/store.js'
import { backends, useTestStore } from '../support/helper.js'

const key = (name: string, keyHash: string, createdAt = new Date()): NewApiKeyRecord =>
  ({ name, keyHash, scopes: ['pets:read'], createdAt, expiresAt: new Date('2031-01-02T03:04:05.000Z'), lifetimeSeconds: null, rateLimit: 7 })

for (const backend of backends()) {
  describe(`${backend.name}: the store's API keys`, { skip: backend.skip }, () => {
    const fixture = useTestStore(backend.name)
    const currentId = async (name: string): Promise<number> =>
      (await fixture.store.listApiKeys()).find((r) => r.name === name && r.retiresAt === null)!.id

    it('keeps scopes, expiry and rate limit, and one current key per name', async () => {
      const record = await fixture.store.insertApiKey(key('ci', 'a'.repeat(64)))
      assert.deepEqual(record?.scopes, ['pets:read'])
      assert.equal(record?.expiresAt?.toISOString(), '2031-01-02T03:04:05.000Z')
      assert.equal(record?.rateLimit, 7)
      assert.equal(record?.retiresAt, null)
      assert.equal(await fixture.store.insertApiKey(key('ci', 'b'.repeat(64))), undefined)
    })

    it('rotates: the old retires at the grace, a retiring one ends at once, a key current no more is not replaced', async () => {
      const graceEndsAt = new Date('2030-01-02T00:00:00.000Z')
      const replacedId = await currentId('ci')
      const first = await fixture.store.rotateApiKey({ replacedId, graceEndsAt, key: key('ci', 'c'.repeat(64), new Date('2030-01-01T00:00:00.000Z')) })
      assert.equal(first?.keyHash, 'c'.repeat(64))
      assert.equal((await fixture.store.findApiKeyByHash('a'.repeat(64)))?.retiresAt?.toISOString(), graceEndsAt.toISOString())
      assert.equal(await fixture.store.rotateApiKey({ replacedId, graceEndsAt, key: key('ci', 'x'.repeat(64)) }), undefined)
      await fixture.store.rotateApiKey({ replacedId: first!.id, graceEndsAt, key: key('ci', 'd'.repeat(64), new Date('2030-01-01T01:00:00.000Z')) })
      const byHash = new Map((await fixture.store.listApiKeys()).filter((r) => r.name === 'ci').map((r) => [r.keyHash[0], r.retiresAt?.toISOString() ?? null]))
      assert.deepEqual(Object.fromEntries(byHash), { a: '2030-01-01T01:00:00.000Z', c: graceEndsAt.toISOString(), d: null })
    })

    it('revokes every key of a name, and a revoked key cannot be rotated', async () => {
      const replacedId = await currentId('ci')
      assert.equal(await fixture.store.revokeApiKey('ci'), true)
      assert.ok((await fixture.store.listApiKeys()).filter((r) => r.name === 'ci').every((r) => r.revokedAt !== null))
      assert.equal(await fixture.store.revokeApiKey('ci'), false)
      assert.equal(await fixture.store.rotateApiKey({ replacedId, graceEndsAt: new Date(), key: key('ci', 'e'.repeat(64)) }), undefined)
    })

    it('records last uses in one batch, never moving one back', async () => {
      await fixture.store.insertApiKey(key('used', 'f'.repeat(64)))
      await fixture.store.recordApiKeyUses([{ keyHash: 'f'.repeat(64), at: new Date('2030-05-05T00:00:00.000Z') }])
      await fixture.store.recordApiKeyUses([{ keyHash: 'f'.repeat(64), at: new Date('2030-05-04T00:00:00.000Z') }, { keyHash: '0'.repeat(64), at: new Date() }])
      assert.equal((await fixture.store.findApiKeyByHash('f'.repeat(64)))?.lastUsedAt?.toISOString(), '2030-05-05T00:00:00.000Z')
    })
  })
}
