/**
 * Animals as JSON Lines, for `import` and `export`: one animal per line, checked
 * by the same schema and the same exact JSON parser as a request to the API.
 */
import { describeBrokenRule } from '../schemas/broken-rule.js'
import { compileSchema } from '../schemas/components.js'
import { parseExactJson } from '../schemas/json-reader.js'
import { parseInt64 } from '../schemas/int64.js'
import { Pet } from '../schemas/pets.js'
import { BODY_LIMIT_BYTES } from '../schemas/limits.js'

const checkPet = compileSchema(Pet)

/**
 * The longest line `import` takes, in bytes, its newline aside: an animal is a request
 * body and gets the body's limit, far above any valid line (a name is at most 255 characters).
 */
export const LINE_LIMIT_BYTES = BODY_LIMIT_BYTES

/** A line that is JSON but no animal; the message names the field and its rule. */
export class InvalidPetLine extends Error {
  override name = 'InvalidPetLine'
}

// The exact form formatPetLine writes. Such a line decodes to what parseExactJson
// gives, about five times faster (test/cli/pet-lines.test.ts checks both agree).
const CANONICAL = /^\{"id":([1-9][0-9]{0,18}),"name":("(?:[^"\\]|\\.)*"),"categoryId":([1-9][0-9]{0,18}),"status":"(available|pending|sold)"\}$/

function decodeCanonical (line: string): unknown {
  // The regex keeps a backtrack entry a character of the name: past about 8 million, V8 throws
  // a RangeError (stack overflow). Longer lines go to the exact parser, which refuses them.
  if (line.length > LINE_LIMIT_BYTES) return undefined
  const match = CANONICAL.exec(line)
  if (match === null) return undefined
  let name: unknown
  try { name = JSON.parse(match[2]!) } catch { return undefined }
  return { id: parseInt64(match[1]!), name, categoryId: parseInt64(match[3]!), status: match[4] }
}

/**
 * One line to an animal.
 * @throws MalformedJson, InvalidPetLine
 * @example parsePetLine('{"id":1,"name":"Rex","categoryId":9007199254740993,"status":"sold"}').categoryId // 9007199254740993n
 */
export function parsePetLine (line: string): Pet {
  const value = decodeCanonical(line) ?? parseExactJson(line)
  if (!checkPet.Check(value)) throw new InvalidPetLine(describeBrokenRule(checkPet, value))
  return value
}

/**
 * One animal to one line; int64 values are written exactly.
 * @example formatPetLine({ id: 1, name: 'Rex', categoryId: 2n ** 62n, status: 'sold' })
 */
export function formatPetLine (pet: Pet): string {
  // A number or a bigint prints its exact digits; JSON.stringify would refuse the bigint.
  return `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId},"status":"${pet.status}"}`
}
