import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BrokenRule, duration, instant, integer } from '../../src/schemas/operator-values.js'

const INSTANT_FORM = 'must be an RFC 3339 instant with its offset, YYYY-MM-DDThh:mm:ss[.fff] then Z or ±hh:mm, such as 2030-12-05T00:00:00Z'

describe('the one rule of each value an operator writes (settings and CLI flags)', () => {
  it('reads an integer as plain decimal digits, leading zeros too, within its range', () => {
    assert.equal(integer(1, 65535)('08080'), 8080)
    assert.equal(integer(0, 999_999_999)('0'), 0)
    for (const raw of ['', '-1', '+1', '1.0', '1e3', ' 1', '0x10', '65536', '99999999999999999999']) {
      assert.throws(() => integer(1, 65535)(raw), new BrokenRule('must be an integer from 1 to 65535'), raw)
    }
  })

  it('reads a duration as an integer and a unit, at most 3650d, 0s only when allowed', () => {
    assert.deepEqual(['45s', '12h', '90d', '090d', '3650d'].map(duration()), [45, 43_200, 7_776_000, 7_776_000, 315_360_000])
    assert.equal(duration({ zero: true })('0s'), 0)
    for (const raw of ['0s', '3651d', '1w', '1.5h', 'd', '-1d', '1 d']) {
      assert.throws(() => duration()(raw), new BrokenRule('must be a positive integer followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d'), raw)
    }
    assert.throws(() => duration({ zero: true })('1w'), new BrokenRule('must be an integer from 0 followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d'))
  })

  it('reads an instant as RFC 3339 with its offset: a fraction, a lower-case t and z, any offset to ±23:59', () => {
    for (const [raw, iso] of [
      ['2030-12-05T00:00:00Z', '2030-12-05T00:00:00.000Z'],
      ['2030-12-05t00:00:00z', '2030-12-05T00:00:00.000Z'],
      ['2030-12-05T00:00:00.5Z', '2030-12-05T00:00:00.500Z'],
      ['2030-12-05T09:00:00.123456789+09:00', '2030-12-05T00:00:00.123Z'],
      ['2030-12-04T23:59:00-23:59', '2030-12-05T23:58:00.000Z'],
      ['2032-02-29T00:00:00Z', '2032-02-29T00:00:00.000Z']
    ] as const) assert.equal(instant(raw).toISOString(), iso, raw)
  })

  it('refuses an instant without its offset, in another form, or that does not exist', () => {
    for (const raw of ['2030-12-05T00:00:00', '2030-12-05', '2030-12-05 00:00:00Z', '2030-12-05T00:00Z', '2030-12-05T00:00:00.Z', '2030-12-05T00:00:00+0900', '2030-12-05T00:00:00+24:00', 'Thu, 05 Dec 2030 00:00:00 GMT']) {
      assert.throws(() => instant(raw), new BrokenRule(INSTANT_FORM), raw)
    }
    for (const raw of ['2030-02-31T00:00:00Z', '2031-02-29T00:00:00Z', '2030-12-05T24:00:00Z', '2030-12-31T23:59:60Z', '2030-13-01T00:00:00+01:00', '2030-12-05t25:00:00.5z']) {
      assert.throws(() => instant(raw), new BrokenRule(`must be a date and time that exist: ${raw.slice(0, 19).toUpperCase()} does not`), raw)
    }
  })
})
