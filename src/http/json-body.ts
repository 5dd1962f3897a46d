/**
 * The `application/json` body parser: strict UTF-8, read exactly (src/schemas/json-reader.ts),
 * and only uncompressed.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyBodyParser } from 'fastify'
import { HttpError } from './errors.js'
import { decodeUtf8, parseExactJson } from '../schemas/json-reader.js'

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
 */
function checkBodyEncoding (headers: IncomingHttpHeaders): void {
  const contentEncoding = headers['content-encoding']
  if (contentEncoding !== undefined && !isIdentity(contentEncoding)) {
    throw new HttpError('unsupported_media_type', 'Content-Encoding: must be identity; send the body uncompressed')
  }
  const contentType = headers['content-type'] ?? ''
  if (contentType.includes(';') && !isUtf8Charset(contentType)) {
    throw new HttpError('unsupported_media_type', 'Content-Type: charset must be utf-8')
  }
}

/** What the API takes as a body: `application/json`, with any parameters (a charset only utf-8). */
export const JSON_CONTENT_TYPE = /^application\/json(\s*;.*)?$/i

/**
 * The one body parser: uncompressed UTF-8 JSON, read exactly.
 * @example app.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: 'buffer' }, parseJsonBody)
 */
export const parseJsonBody: FastifyBodyParser<Buffer> = (request, body, done) => {
  try {
    checkBodyEncoding(request.headers)
    done(null, parseExactJson(decodeUtf8(body)))
  } catch (err) {
    done(err as Error, undefined)
  }
}
