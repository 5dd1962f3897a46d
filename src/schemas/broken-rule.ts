/**
 * The first rule a value breaks, worded for people: `limit: must be an integer from 1 to 100`.
 * The API answers it in a 400 and `petstore import` prints it for a bad line.
 */
import type { TSchema } from '@sinclair/typebox'
import type { TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { describeRule } from './kinds.js'

/** Where the value came from: a JSON body, or a request's query, path or headers. */
export type Part = 'body' | 'querystring' | 'params' | 'headers'

interface FirstError { type: ValueErrorType, path: string, schema: TSchema }

/**
 * Names the field at fault and its rule, for a value the compiled schema refused.
 * @example if (!checkPet.Check(value)) throw new InvalidPetLine(describeBrokenRule(checkPet, value))
 */
export function describeBrokenRule (check: TypeCheck<TSchema>, data: unknown, part: Part = 'body'): string {
  const error = firstError(check.Errors(data))
  if (error === undefined || error.path === '') return `${part}: must be a JSON object`
  const field = error.path.slice(1).split('/')[0]!
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    return `${field}: is not a field of this request${field === 'id' ? '; the id is assigned by the service' : ''}`
  }
  if (error.type === ValueErrorType.ObjectRequiredProperty) return `${field}: is required`
  const value = (data as Record<string, unknown>)[field]
  if (part === 'querystring' && Array.isArray(value)) return `${field}: must be given once`
  return `${field}: ${describeRule(error.schema)}`
}

/** An unknown field is reported before the rest: `categoryID` is a typo of `categoryId`, not a missing field. */
function firstError (errors: Iterable<FirstError>): FirstError | undefined {
  let first: FirstError | undefined
  for (const error of errors) {
    if (error.type === ValueErrorType.ObjectAdditionalProperties) return error
    first ??= error
  }
  return first
}
