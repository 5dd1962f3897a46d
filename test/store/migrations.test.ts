import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStore } from '../../src/store/open-store.js'
import { backends, createTestDatabase } from '../support/helper.js'
import { startCli } from '../support/process.js'

for (const backend of backends()) {
  describe(`${backend.name}: petstore migrate`, { skip: backend.skip }, () => {
    it('succeeds when run twice at once on a fresh database, and the service then starts on it', async () => {
      const database = await createTestDatabase(backend.name)
      try {
        const runs = [startCli(['migrate'], { DATABASE_URL: database.url }), startCli(['migrate'], { DATABASE_URL: database.url })]
        for (const run of runs) {
          assert.equal(await run.exited, 0, run.stderr())
          assert.equal(run.stdout(), 'migrations applied\n')
        }
        const store = await openStore(database.url)
        try {
          assert.deepEqual(await store.migrate(), [], 'nothing left to apply')
          assert.deepEqual(await store.listPets({ limit: 1 }), [])
        } finally {
          await store.close()
        }
      } finally {
        await database.drop()
      }
    })
  })
}
