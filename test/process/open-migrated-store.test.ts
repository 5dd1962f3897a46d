import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, parseConfig } from '../../src/config.js'
import { openMigratedStore } from '../../src/process/open-migrated-store.js'

describe('the start-up line for a database that cannot be opened', () => {
  for (const host of ['127.0.0.1', 'localhost']) {
    it(`shows the driver's cause (ECONNREFUSED) for a refused connection to ${host}`, async () => {
      await assert.rejects(openMigratedStore(parseConfig({ DATABASE_URL: `postgres://nobody@${host}:1/none` })), (err: Error) => {
        assert.ok(err instanceof ConfigError)
        assert.match(err.message, /^DATABASE_URL: cannot open the database \(.*ECONNREFUSED.*\)$/)
        return true
      })
    })
  }
})
