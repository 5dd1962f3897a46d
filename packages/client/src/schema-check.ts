/**
 * Checks an answer against the API's JSON Schemas (generated/schemas.ts), for the few
 * keywords those schemas use. Fields a schema does not name are let through: a newer
 * server may add one, and it must not break an older client.
 */
import { schemas } from './generated/schemas.js'

type SchemaName = keyof typeof schemas

interface Schema {
  $ref?: string
  type?: string
  format?: string
  enum?: readonly unknown[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  required?: readonly string[]
  properties?: Readonly<Record<string, Schema>>
  items?: Schema
}

const REF_PREFIX = '#/components/schemas/'
const patterns = new Map<string, RegExp>()

/** @example matchesSchema('Pet', { id: 42, name: 'Rex', categoryId: 3, status: 'available' }) // true */
export function matchesSchema (name: SchemaName, value: unknown): boolean {
  return matches(schemas[name], value)
}

function matches (schema: Schema, value: unknown): boolean {
  if (schema.$ref !== undefined) return matches(schemas[schema.$ref.slice(REF_PREFIX.length) as SchemaName], value)
  if (schema.enum !== undefined && !schema.enum.includes(value)) return false
  switch (schema.type) {
    case 'object': return isObject(value) && objectMatches(schema, value)
    case 'array': return Array.isArray(value) && (schema.items === undefined || value.every((item) => matches(schema.items!, item)))
    case 'string': return typeof value === 'string' && stringMatches(schema, value)
    // int64 integers above 2^53 - 1 arrive as bigints from the exact JSON parse.
    case 'integer': return (Number.isSafeInteger(value) || (schema.format === 'int64' && typeof value === 'bigint')) && inRange(schema, value as number | bigint)
    case undefined: return true
    default: return false
  }
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function objectMatches (schema: Schema, value: Record<string, unknown>): boolean {
  if (!(schema.required ?? []).every((key) => Object.hasOwn(value, key))) return false
  return Object.entries(schema.properties ?? {}).every(([key, property]) => !Object.hasOwn(value, key) || matches(property, value[key]))
}

function stringMatches (schema: Schema, value: string): boolean {
  // JSON Schema counts code points, not UTF-16 units.
  const length = [...value].length
  if (schema.minLength !== undefined && length < schema.minLength) return false
  if (schema.maxLength !== undefined && length > schema.maxLength) return false
  return schema.pattern === undefined || patternOf(schema.pattern).test(value)
}

function patternOf (source: string): RegExp {
  let pattern = patterns.get(source)
  if (pattern === undefined) {
    pattern = new RegExp(source, 'u')
    patterns.set(source, pattern)
  }
  return pattern
}

function inRange (schema: Schema, value: number | bigint): boolean {
  return (schema.minimum === undefined || value >= schema.minimum) && (schema.maximum === undefined || value <= schema.maximum)
}
