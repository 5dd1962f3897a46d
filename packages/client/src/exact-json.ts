/**
 * JSON with exact integers: JSON.parse rounds int64 values above 2^53 - 1, so
 * responses are parsed with lossless-json and such integers become bigints;
 * bigints are sent as plain JSON numbers.
 */
import { parse, stringify } from 'lossless-json'

const INTEGER_LITERAL = /^-?[0-9]+$/

// Safe integers stay numbers so that equal values compare with ===, as on the server.
function parseNumber (literal: string): number | bigint {
  if (!INTEGER_LITERAL.test(literal)) return Number(literal)
  const value = BigInt(literal)
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value
}

/** @example parseExactJson('{"categoryId":9007199254740993}') // { categoryId: 9007199254740993n } */
export function parseExactJson (text: string): unknown {
  return parse(text, null, parseNumber)
}

/** @example stringifyExactJson({ categoryId: 9007199254740993n }) // '{"categoryId":9007199254740993}' */
export function stringifyExactJson (value: unknown): string {
  const text = stringify(value)
  if (text === undefined) throw new TypeError('value cannot be sent as JSON')
  return text
}
