/**
 * The `application/json` body parser. JSON.parse rounds integers above 2^53 - 1
 * and keeps the last of duplicate keys; this parser keeps every integer exact
 * (a bigint past the safe range) and refuses duplicate keys with different values.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { parse } from 'lossless-json'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../domain/errors.js'
import { parseInt64 } from '../schemas/kinds.js'
import fp from 'fastify-plugin'

const INTEGER_LITERAL = /^-?[0-9]+$/

// No field of this API takes a fraction: a literal with a fraction or an exponent
// can only be invalid, and NaN fails every integer check without rounding 1.0000000000000001 into 1.
function parseNumber (literal: string): number | bigint {
  return INTEGER_LITERAL.test(literal) ? parseInt64(literal) : Number.NaN
}

/**
 * Parses a request body exactly.
 * @throws AppError malformed_json
 * @example parseJsonBody('{"categoryId":9007199254740993}') // { categoryId: 9007199254740993n }
 */
export function parseJsonBody (text: string): unknown {
  if (text.trim() === '') throw new AppError('malformed_json', 'body: is empty; send a JSON object')
  try {
    return parse(text, null, parseNumber)
  } catch (err) {
    if (err instanceof RangeError) throw new AppError('malformed_json', 'body: JSON is nested too deeply')
    throw new AppError('malformed_json', `body: is not valid JSON (${(err as Error).message})`)
  }
}

// JSON is UTF-8 (RFC 8259 §8.1): invalid bytes are refused, not silently replaced by U+FFFD.
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes a body as strict UTF-8 (a leading BOM is dropped).
 * @throws AppError malformed_json
 * @example decodeUtf8(Buffer.from('{"name":"Rex"}'))
 */
export function decodeUtf8 (bytes: Buffer): string {
  try {
    return UTF8.decode(bytes)
  } catch {
    throw new AppError('malformed_json', 'body: is not valid UTF-8')
  }
}

/** Whether a Content-Encoding names no coding but `identity` (empty list elements are skipped, RFC 9110 §5.6.1). */
function isIdentity (contentEncoding: string): boolean {
  for (const coding of contentEncoding.split(',')) {
    const name = coding.trim().toLowerCase()
    if (name !== '' && name !== 'identity') return false
  }
  return true
}

/** Whether every `charset` parameter of a Content-Type, quoted or not, is utf-8 (none at all is fine). */
function isUtf8Charset (contentType: string): boolean {
  const parameters = contentType.split(';')
  for (let i = 1; i < parameters.length; i++) {
    const parameter = parameters[i]!
    const equals = parameter.indexOf('=')
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue
    if (parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase() !== 'utf-8') return false
  }
  return true
}

/**
 * Refuses a body this parser would misread: compressed, or in another charset (RFC 9110 §15.5.16).
 * @throws AppError unsupported_media_type
 * @example checkBodyEncoding({ 'content-type': 'application/json; charset=latin1' }) // throws
 */
export function checkBodyEncoding (headers: IncomingHttpHeaders): void {
  const contentEncoding = headers['content-encoding']
  if (contentEncoding !== undefined && !isIdentity(contentEncoding)) {
    throw new AppError('unsupported_media_type', 'Content-Encoding: must be identity; send the body uncompressed')
  }
  const contentType = headers['content-type'] ?? ''
  if (contentType.includes(';') && !isUtf8Charset(contentType)) {
    throw new AppError('unsupported_media_type', 'Content-Type: charset must be utf-8')
  }
}

/** Makes `application/json` (any parameters; a charset only utf-8), uncompressed, the one body type the API takes. */
async function jsonBodyPlugin (app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(/^application\/json(\s*;.*)?$/i, { parseAs: 'buffer' }, (request, body, done) => {
    try {
      checkBodyEncoding(request.headers)
      done(null, parseJsonBody(decodeUtf8(body as Buffer)))
    } catch (err) {
      done(err as Error, undefined)
    }
  })
}

/** @example await app.register(jsonBody) */
export const jsonBody = fp(jsonBodyPlugin, { name: 'petstore-json-body' })
