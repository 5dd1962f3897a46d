import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { retryWhileBusy } from '../../../src/store/sqlite/connection.js'

/** A run that fails with `codes` in turn, then answers 'done'. */
function failingWith (...codes: string[]): { run: () => string, tries: () => number } {
  let tries = 0
  return {
    run: () => {
      const code = codes[tries++]
      if (code !== undefined) throw new Database.SqliteError(`failed with ${code}`, code)
      return 'done'
    },
    tries: () => tries
  }
}

describe('sqlite: retryWhileBusy', () => {
  it('tries again on SQLITE_BUSY and on its extended codes, such as SQLITE_BUSY_RECOVERY', () => {
    const busy = failingWith('SQLITE_BUSY', 'SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT')
    assert.equal(retryWhileBusy(busy.run, 1), 'done')
    assert.equal(busy.tries(), 5)
  })

  it('gives up at once on any other error', () => {
    for (const code of ['SQLITE_LOCKED', 'SQLITE_IOERR_FSYNC', 'SQLITE_CONSTRAINT_UNIQUE']) {
      const failing = failingWith(code)
      assert.throws(() => retryWhileBusy(failing.run, 1), { code })
      assert.equal(failing.tries(), 1, code)
    }
  })
})
