/**
 * Animals as JSON Lines, for `import` and `export`: one animal per line, checked
 * by the same schema and the same exact JSON parser as a request to the API.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { parseJsonBody } from '../http/json-body.js'
import { validationErrorOf } from '../http/validation.js'
import { toInt64 } from '../schemas/kinds.js'
import { Pet } from '../schemas/pets.js'

const checkPet = TypeCompiler.Compile(Pet)

// The exact form formatPetLine writes. Such a line decodes to what parseJsonBody
// gives, about five times faster (test/cli/pet-lines.test.ts checks both agree).
const CANONICAL = /^\{"id":([1-9][0-9]{0,18}),"name":("(?:[^"\\]|\\.)*"),"categoryId":([1-9][0-9]{0,18}),"status":"(available|pending|sold)"\}$/

function decodeCanonical (line: string): unknown {
  const match = CANONICAL.exec(line)
  if (match === null) return undefined
  let name: unknown
  try { name = JSON.parse(match[2]!) } catch { return undefined }
  return { id: toInt64(BigInt(match[1]!)), name, categoryId: toInt64(BigInt(match[3]!)), status: match[4] }
}

/**
 * One line to an animal, or the AppError that says what is wrong with it.
 * @example parsePetLine('{"id":1,"name":"Rex","categoryId":9007199254740993,"status":"sold"}').categoryId // 9007199254740993n
 */
export function parsePetLine (line: string): Pet {
  const value = decodeCanonical(line) ?? parseJsonBody(line)
  if (!checkPet.Check(value)) throw validationErrorOf(checkPet, value)
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
