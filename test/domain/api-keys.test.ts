import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiKeyNameTaken, NoApiKeyToRotate, issueApiKey, rotateApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { backends, useTestStore } from '../support/helper.js'

for (const backend of backends()) {
  describe(`${backend.name}: issueApiKey`, { skip: backend.skip }, () => {
    const fixture = useTestStore(backend.name)

    it('refuses a taken name with ApiKeyNameTaken, also when both ask at the same moment, and keeps one key', async () => {
      await issueApiKey(fixture.store, { name: 'first' })
      await assert.rejects(issueApiKey(fixture.store, { name: 'first' }), new ApiKeyNameTaken('a key named first exists already'))
      const outcomes = await Promise.allSettled([issueApiKey(fixture.store, { name: 'racing' }), issueApiKey(fixture.store, { name: 'racing' })])
      assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected'])
      assert.ok(outcomes.some((outcome) => outcome.status === 'rejected' && outcome.reason instanceof ApiKeyNameTaken))
      assert.deepEqual((await fixture.store.listApiKeys()).map((record) => record.name), ['first', 'racing'])
    })

    it('refuses to rotate a key whose fixed expiry has passed, since the new key would keep it', async () => {
      await issueApiKey(fixture.store, { name: 'lapsed', lifetime: { expiresAt: new Date(Date.now() + 50) } })
      await new Promise((resolve) => setTimeout(resolve, 60))
      await assert.rejects(rotateApiKey(fixture.store, 'lapsed', 0), NoApiKeyToRotate)
      await issueApiKey(fixture.store, { name: 'renewed', lifetime: { seconds: 1 } })
      await new Promise((resolve) => setTimeout(resolve, 1_010))
      assert.match(await rotateApiKey(fixture.store, 'renewed', 0), /^petstore_api_/, 'an --expires-in restarts')
    })

    it('rotates a name twice at the same moment: both in turn, each new key with the scopes and rate limit', async () => {
      await issueApiKey(fixture.store, { name: 'busy', scopes: ['pets:read'], rateLimit: 7 })
      await Promise.all([rotateApiKey(fixture.store, 'busy', 60), rotateApiKey(fixture.store, 'busy', 60)])
      const records = (await fixture.store.listApiKeys()).filter((record) => record.name === 'busy')
      assert.deepEqual(records.map((record) => [record.scopes, record.rateLimit]), Array(3).fill([['pets:read'], 7]))
      assert.equal(records.filter((record) => record.retiresAt === null).length, 1)
    })
  })
}
