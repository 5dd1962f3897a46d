/**
 * Reading JSON exactly, for request bodies and import lines alike. JSON.parse rounds integers
 * above 2^53 - 1 and keeps the last of duplicate keys; this parser keeps every integer exact
 * (a bigint past the safe range) and refuses duplicate keys with different values.
 */
import { parse } from 'lossless-json'
import { parseInt64 } from './int64.js'

/** Text that is not one JSON value, or bytes that are not UTF-8; the message says what, without naming the field. */
export class MalformedJson extends Error {
  override name = 'MalformedJson'
}

const INTEGER_LITERAL = /^-?[0-9]+$/

// No field of this API takes a fraction: a literal with a fraction or an exponent
// can only be invalid, and NaN fails every integer check without rounding 1.0000000000000001 into 1.
function parseNumber (literal: string): number | bigint {
  return INTEGER_LITERAL.test(literal) ? parseInt64(literal) : Number.NaN
}

/**
 * Parses JSON text exactly.
 * @throws MalformedJson
 * @example parseExactJson('{"categoryId":9007199254740993}') // { categoryId: 9007199254740993n }
 */
export function parseExactJson (text: string): unknown {
  if (text.trim() === '') throw new MalformedJson('is empty; send a JSON object')
  try {
    return parse(text, null, parseNumber)
  } catch (err) {
    if (err instanceof RangeError) throw new MalformedJson('JSON is nested too deeply')
    throw new MalformedJson(`is not valid JSON (${(err as Error).message})`)
  }
}

// JSON is UTF-8 (RFC 8259 §8.1): invalid bytes are refused, not silently replaced by U+FFFD.
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes bytes as strict UTF-8 (a leading BOM is dropped).
 * @throws MalformedJson
 * @example decodeUtf8(Buffer.from('{"name":"Rex"}'))
 */
export function decodeUtf8 (bytes: Buffer): string {
  try {
    return UTF8.decode(bytes)
  } catch {
    throw new MalformedJson('is not valid UTF-8')
  }
}
