/**
 * Request validation, from the route schemas themselves (src/schemas): the
 * TypeBox compiler checks each part, query and path integers are decoded from
 * their digits, and the first broken rule becomes one 400 naming the field.
 */
import { Kind, type TObject, type TSchema } from '@sinclair/typebox'
import type { TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType } from '@sinclair/typebox/errors'
import type { FastifySchemaCompiler } from 'fastify'
import { AppError } from '../domain/errors.js'
import { compileSchema } from '../schemas/components.js'
import { describeRule, isDecimalInteger, parseInt64 } from '../schemas/kinds.js'

type Part = 'body' | 'querystring' | 'params' | 'headers'

/** Fastify's validator compiler: returns the decoded value, or the 400 to answer. */
export const compileValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = compileSchema(schema)
  const part = (httpPart ?? 'body') as Part
  const properties = schema[Kind] === 'Object' ? (schema as TObject).properties : {}
  const decimals = Object.keys(properties).filter((key) => isDecimalInteger(properties[key]!))
  const defaults = Object.entries(properties).filter(([, field]) => field.default !== undefined && isDecimalInteger(field))

  return (data: unknown) => {
    if (part === 'body' && (data === null || data === undefined)) {
      return { error: new AppError('validation_failed', 'body: is required; send a JSON object') }
    }
    if (!check.Check(data)) return { error: validationErrorOf(check, data, part) }
    if (decimals.length === 0) return { value: data }
    // Query and path values arrive as strings; the checked digits become integers.
    const value: Record<string, unknown> = { ...(data as Record<string, unknown>) }
    for (const [key, field] of defaults) value[key] ??= String(field.default)
    for (const key of decimals) {
      if (typeof value[key] === 'string') value[key] = parseInt64(value[key])
    }
    return { value }
  }
}

interface FirstError { type: ValueErrorType, path: string, schema: TSchema }

/**
 * The 400 for a value a compiled schema refused, worded as the API words it.
 * @example if (!check.Check(pet)) throw validationErrorOf(check, pet)
 */
export function validationErrorOf (check: TypeCheck<TSchema>, data: unknown, part: Part = 'body'): AppError {
  return toValidationError(firstError(check.Errors(data)), part, data)
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

function toValidationError (error: FirstError | undefined, part: Part, data: unknown): AppError {
  if (error === undefined || error.path === '') {
    return new AppError('validation_failed', `${part === 'body' ? 'body' : part}: must be a JSON object`)
  }
  const field = error.path.slice(1).split('/')[0]!
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    return new AppError('validation_failed', `${field}: is not a field of this request${field === 'id' ? '; the id is assigned by the service' : ''}`)
  }
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    return new AppError('validation_failed', `${field}: is required`)
  }
  const value = (data as Record<string, unknown>)[field]
  if (part === 'querystring' && Array.isArray(value)) {
    return new AppError('validation_failed', `${field}: must be given once`)
  }
  return new AppError('validation_failed', `${field}: ${describeRule(error.schema)}`)
}
