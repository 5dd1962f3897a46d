import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ApiKeyNameTaken, issueApiKey } from '../../src/domain/api-keys.js'
import type { Store } from '../../src/store/store.js'
import { backends, createTestDatabase, openMigratedStore, type TestDatabase } from '../helper.js'

for (const backend of backends()) {
  describe(`${backend.name}: issueApiKey`, { skip: backend.skip }, () => {
    let database: TestDatabase
    let store: Store
    before(async () => {
      database = await createTestDatabase(backend.name)
      store = await openMigratedStore(database)
    })
    after(async () => {
      await store?.close()
      await database?.drop()
    })

    it('refuses a taken name with ApiKeyNameTaken, also when both ask at the same moment, and keeps one key', async () => {
      await issueApiKey(store, 'first')
      await assert.rejects(issueApiKey(store, 'first'), new ApiKeyNameTaken('a key named first exists already'))
      const outcomes = await Promise.allSettled([issueApiKey(store, 'racing'), issueApiKey(store, 'racing')])
      assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected'])
      assert.ok(outcomes.some((outcome) => outcome.status === 'rejected' && outcome.reason instanceof ApiKeyNameTaken))
      assert.deepEqual((await store.listApiKeys()).map((record) => record.name), ['first', 'racing'])
    })
  })
}
