import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseInt64 } from '../../src/schemas/int64.js'

describe('parseInt64: int64 text to its canonical value', () => {
  it('reads text of 15 characters or fewer as the exact number', () => {
    assert.equal(parseInt64('999999999999999'), 999_999_999_999_999)
    assert.equal(parseInt64('-99999999999999'), -99_999_999_999_999)
    assert.equal(parseInt64('000000000000042'), 42)
    assert.equal(parseInt64('0'), 0)
  })

  it('reads longer text exactly: a number while safe, a bigint past 2^53 - 1', () => {
    assert.equal(parseInt64('9007199254740991'), Number.MAX_SAFE_INTEGER)
    assert.equal(parseInt64('0000000000000042'), 42)
    assert.equal(parseInt64('9007199254740993'), 9007199254740993n)
    assert.equal(parseInt64('9223372036854775807'), 9223372036854775807n)
    assert.equal(parseInt64('-9223372036854775808'), -9223372036854775808n)
  })
})
