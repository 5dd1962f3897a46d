import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { InvalidPetLine, LINE_LIMIT_BYTES, formatPetLine, parsePetLine } from '../../src/cli/pet-lines.js'
import { MalformedJson, parseExactJson } from '../../src/schemas/json-reader.js'
import { toInt64 } from '../../src/schemas/int64.js'

const int64 = fc.bigInt({ min: 1n, max: 9223372036854775807n }).map(toInt64)
const pet = fc.record({
  id: int64,
  name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((name) => /\S/u.test(name) && !/\p{Cc}/u.test(name)),
  categoryId: int64,
  status: fc.constantFrom('available', 'pending', 'sold' as const)
})

function outcome (work: () => unknown): unknown {
  try {
    return { value: work() }
  } catch (err) {
    return err instanceof MalformedJson || err instanceof InvalidPetLine ? { error: err.message } : { thrown: String(err) }
  }
}

describe('JSON Lines of animals (import and export)', () => {
  it('reads back every line it writes, int64 values exact', () => {
    fc.assert(fc.property(pet, (animal) => {
      assert.deepEqual(parsePetLine(formatPetLine(animal)), { ...animal })
    }), { seed: 20261122, numRuns: 500 })
  })

  it('decodes a line exactly as the API body parser does, whatever the line', () => {
    const line = fc.oneof(
      pet.map(formatPetLine),
      pet.map((animal) => JSON.stringify({ ...animal, id: String(animal.id), categoryId: String(animal.categoryId) })),
      fc.tuple(pet.map(formatPetLine), fc.nat(60), fc.string({ maxLength: 3 })).map(([text, at, junk]) => text.slice(0, at) + junk + text.slice(at))
    )
    fc.assert(fc.property(line, (text) => {
      const direct = outcome(() => parseExactJson(text))
      const viaLine = outcome(() => parsePetLine(text))
      if ('value' in (viaLine as object)) assert.deepEqual(viaLine, direct)
    }), { seed: 20261122, numRuns: 2000 })
  })

  it('refuses a name of millions of characters as too long, in the canonical form too (no stack overflow)', () => {
    const line = `{"id":1,"name":"${'a'.repeat(12_000_000)}","categoryId":1,"status":"sold"}`
    assert.throws(() => parsePetLine(line), (err) => err instanceof InvalidPetLine && /^name: must be a string of 1 to 255 characters/.test(err.message))
  })

  it('decodes a canonical line up to the length limit, escapes throughout, without a stack overflow', () => {
    const name = '\\"\\n🐕'.repeat(Math.floor((LINE_LIMIT_BYTES - 60) / 8)) // 8 bytes each
    const line = `{"id":1,"name":"${name}","categoryId":1,"status":"sold"}`
    assert.ok(Buffer.byteLength(line) <= LINE_LIMIT_BYTES)
    assert.throws(() => parsePetLine(line), (err) => err instanceof InvalidPetLine && /^name: must be a string of 1 to 255 characters/.test(err.message))
  })

  it('refuses duplicate keys with different values, like the API', () => {
    assert.throws(() => parsePetLine('{"id":1,"id":2,"name":"Rex","categoryId":1,"status":"sold"}'), /id/)
  })
})
