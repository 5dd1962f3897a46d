/**
 * Field kinds whose rules plain JSON Schema validators get wrong for this API:
 * exact int64 (JavaScript numbers round above 2^53), integers in query strings
 * written as plain decimal digits only, names counted in code points.
 * Each kind is a TypeBox schema: the same object is the JSON Schema published in
 * the OpenAPI document and, through its `Kind`, the check the server runs.
 */
import { Kind, Type, TypeRegistry, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { INT64_MAX, type Int64 as Int64Value } from './int64.js'

interface IntegerOptions {
  minimum: number
  /** Defaults to the int64 maximum. */
  maximum?: number
  default?: number
  description?: string
  examples?: unknown[]
}

function upperBound (schema: { maximum?: number }): bigint {
  return schema.maximum === undefined ? INT64_MAX : BigInt(schema.maximum)
}

function inRange (value: bigint, schema: { minimum: number, maximum?: number }): boolean {
  return value >= BigInt(schema.minimum) && value <= upperBound(schema)
}

TypeRegistry.Set<IntegerOptions>('Int64', (schema, value) => {
  if (typeof value === 'number') return Number.isSafeInteger(value) && inRange(BigInt(value), schema)
  return typeof value === 'bigint' && inRange(value, schema)
})

const DECIMAL = /^[0-9]{1,19}$/

TypeRegistry.Set<IntegerOptions>('DecimalInteger', (schema, value) =>
  typeof value === 'string' && DECIMAL.test(value) && inRange(BigInt(value), schema))

/**
 * An integer in a JSON body: a safe-integer number or, above 2^53 - 1, a bigint
 * from the exact JSON body parser.
 * @example Int64({ minimum: 1 })
 */
export function Int64 (options: IntegerOptions): TUnsafe<Int64Value> {
  return Type.Unsafe<Int64Value>({ ...options, [Kind]: 'Int64', type: 'integer', format: 'int64' })
}

/**
 * An integer in a query string or path: plain decimal digits only (`1e1`, `+5`,
 * `0x10` and ` 5` are refused); decoded to an Int64 by the validator.
 * @example DecimalInteger({ minimum: 1, maximum: 100, default: 20 })
 */
export function DecimalInteger (options: IntegerOptions): TUnsafe<Int64Value> {
  return Type.Unsafe<Int64Value>({ ...options, [Kind]: 'DecimalInteger', type: 'integer', format: 'int64' })
}

export function isDecimalInteger (schema: TSchema): boolean {
  return schema[Kind] === 'DecimalInteger'
}

// Control characters are refused so that SQLite and PostgreSQL (which cannot store
// NUL) keep the same names; lone surrogates cannot be stored as UTF-8 at all.
const CONTROL = /\p{Cc}/u
// Unicode White_Space, not JavaScript's \s, which adds U+FEFF (a format character).
const ONLY_WHITE_SPACE = /^\p{White_Space}*$/u

interface TextOptions { minLength: number, maxLength: number, description?: string, examples?: unknown[] }

TypeRegistry.Set<TextOptions>('Text', (schema, value) => {
  if (typeof value !== 'string' || !value.isWellFormed()) return false
  if (CONTROL.test(value) || ONLY_WHITE_SPACE.test(value)) return false
  // Well formed: each code point past U+FFFF is a pair ending in one low surrogate, counted out.
  let codePoints = value.length
  for (let i = 0; i < value.length; i++) if ((value.charCodeAt(i) & 0xFC00) === 0xDC00) codePoints--
  return codePoints >= schema.minLength && codePoints <= schema.maxLength
})

/**
 * A human text: length in Unicode code points, not only white space, no control
 * character, no lone surrogate.
 * @example Text({ minLength: 1, maxLength: 255 })
 */
export function Text (options: TextOptions): TUnsafe<string> {
  return Type.Unsafe<string>({
    ...options,
    [Kind]: 'Text',
    type: 'string',
    // The same rule as far as a JSON Schema pattern can say it (lone surrogates aside).
    pattern: '^[^\\p{Cc}]*[^\\p{White_Space}\\p{Cc}][^\\p{Cc}]*$'
  })
}

TypeRegistry.Set<{ enum: string[] }>('StringEnum', (schema, value) =>
  typeof value === 'string' && schema.enum.includes(value))

/**
 * A string enumeration published as `{ type: 'string', enum: [...] }`.
 * @example StringEnum(['available', 'pending', 'sold'])
 */
export function StringEnum<const T extends readonly string[]> (values: T, options: { $id?: string, description?: string, default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, [Kind]: 'StringEnum', type: 'string', enum: [...values] })
}

/**
 * The rule a field breaks, worded for the `message` of a 400:
 * `limit: must be an integer from 1 to 100`.
 */
export function describeRule (schema: TSchema): string {
  switch (schema[Kind]) {
    case 'Int64':
    case 'DecimalInteger':
      return `must be an integer from ${schema.minimum} to ${upperBound(schema as { maximum?: number })}`
    case 'Text':
      return `must be a string of ${schema.minLength} to ${schema.maxLength} characters, not only white space, with no control character`
    case 'StringEnum':
      return `must be one of ${(schema.enum as string[]).join(', ')}`
    case 'String':
      return `must be a string of ${schema.minLength ?? 0} to ${schema.maxLength ?? 'any number of'} characters`
    case 'Object':
      return 'must be a JSON object'
    default:
      return 'is not valid'
  }
}
