/**
 * Request validation, from the route schemas themselves (src/schemas): the
 * TypeBox compiler checks each part, query and path integers are decoded from
 * their digits, and the first broken rule becomes one 400 naming the field.
 */
import { Kind, type TObject, type TSchema } from '@sinclair/typebox'
import type { FastifySchemaCompiler } from 'fastify'
import { HttpError } from './errors.js'
import { describeBrokenRule, type Part } from '../schemas/broken-rule.js'
import { compileSchema } from '../schemas/components.js'
import { parseInt64 } from '../schemas/int64.js'
import { isDecimalInteger } from '../schemas/kinds.js'

/** Fastify's validator compiler: returns the decoded value, or the 400 to answer. */
export const compileValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = compileSchema(schema)
  const part = (httpPart ?? 'body') as Part
  const properties = schema[Kind] === 'Object' ? (schema as TObject).properties : {}
  const decimals = Object.keys(properties).filter((key) => isDecimalInteger(properties[key]!))
  const defaults = Object.entries(properties).filter(([, field]) => field.default !== undefined && isDecimalInteger(field))

  return (data: unknown) => {
    if (part === 'body' && (data === null || data === undefined)) {
      return { error: new HttpError('validation_failed', 'body: is required; send a JSON object') }
    }
    if (!check.Check(data)) return { error: new HttpError('validation_failed', describeBrokenRule(check, data, part)) }
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
