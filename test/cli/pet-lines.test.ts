import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { formatPetLine, parsePetLine } from '../../src/cli/pet-lines.js'
import { isAppError } from '../../src/domain/errors.js'
import { parseJsonBody } from '../../src/http/json-body.js'
import { toInt64 } from '../../src/schemas/kinds.js'

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
    return isAppError(err) ? { error: err.message } : { thrown: String(err) }
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
      const direct = outcome(() => parseJsonBody(text))
      const viaLine = outcome(() => parsePetLine(text))
      if ('value' in (viaLine as object)) assert.deepEqual(viaLine, direct)
    }), { seed: 20261122, numRuns: 2000 })
  })

  it('refuses duplicate keys with different values, like the API', () => {
    assert.throws(() => parsePetLine('{"id":1,"id":2,"name":"Rex","categoryId":1,"status":"sold"}'), /id/)
  })
})
