import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { CliError, describeFailure, isBug } from '../../src/cli/errors.js'
import { ConfigError } from '../../src/config.js'
import { StoreUnavailable } from '../../src/store/store-errors.js'

function thrownBy (run: () => unknown): unknown {
  try { run() } catch (err) { return err }
  throw new Error('nothing was thrown')
}

describe('the one line of a failed command', () => {
  it('is the message of an error meant for the operator', () => {
    for (const err of [new CliError('--count: must be an integer from 1 to 100000000'), new ConfigError('PORT: must be an integer from 1 to 65535')]) {
      assert.equal(describeFailure(err), err.message)
      assert.equal(isBug(err), false)
    }
  })

  it("gives the database's own words when the store found it unavailable", () => {
    const unavailable = new StoreUnavailable(undefined, { cause: Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }) })
    assert.equal(describeFailure(unavailable), 'the database is unavailable: database is locked')
    assert.equal(isBug(unavailable), false)
  })

  it('gives the system call and its cause for a failure of the surroundings', () => {
    const missing = thrownBy(() => readFileSync('/nonexistent/petstore'))
    assert.equal(describeFailure(missing), "ENOENT: no such file or directory, open '/nonexistent/petstore'")
    assert.equal(isBug(missing), false)
  })

  it('calls anything else an unexpected error: a bug', () => {
    const bug = thrownBy(() => (undefined as unknown as { name: string }).name)
    assert.equal(isBug(bug), true)
    assert.match(describeFailure(bug), /^unexpected error: TypeError: Cannot read properties of undefined/)
  })
})
