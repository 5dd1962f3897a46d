/**
 * Protocol checks Node's parser leaves to the application: Host, and the request
 * target's length, the headers' size, and headers that must come once.
 */
import type { onRequestHookHandler } from 'fastify'
import { MESSAGES } from '../../schemas/messages.js'
import { HttpError } from '../errors.js'
import { HEADER_LIMIT_BYTES, URL_LIMIT_BYTES } from '../../schemas/limits.js'

const MAX_HEADER_FIELDS = 500

// Two values of these would be read differently by different components (RFC 9110 §5.3);
// two Authorization headers are malformed credentials, a 401 of the auth hook, and two
// Host headers a 400 of checkHost.
const SINGLE_HEADERS = ['content-type', 'idempotency-key'] as const

// Host flows into Link, Location and the OpenAPI servers: only host[:port] (RFC 3986
// reg-name or IPv4) or [IPv6][:port], so no client can forge a link through it.
const HOST = /^(?:(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/

/**
 * Host: sent once in HTTP/1.1, and only host[:port].
 * @example app.addHook('onRequest', checkHost)
 */
export const checkHost: onRequestHookHandler = (request, _reply, done) => {
  const host = request.raw.headersDistinct.host
  if (request.raw.httpVersion === '1.1' && host === undefined) {
    throw new HttpError('validation_failed', 'Host: is required in HTTP/1.1')
  }
  if ((host?.length ?? 0) > 1) throw new HttpError('validation_failed', 'Host: must be sent once')
  if (host?.length === 1 && !HOST.test(host[0]!)) {
    throw new HttpError('validation_failed', 'Host: must be host[:port] or [IPv6 address][:port]')
  }
  done()
}

/** @example app.addHook('onRequest', checkRequest) */
export const checkRequest: onRequestHookHandler = (request, _reply, done) => {
  // The target as sent: src/http/routable-url.ts may have lengthened it.
  if (Buffer.byteLength(request.originalUrl) > URL_LIMIT_BYTES) {
    throw new HttpError('uri_too_long', MESSAGES.uriTooLong)
  }
  // Node's parser lets some long lists of small headers through, and keeps only the first
  // 1000 of them: count both bytes and fields here.
  const raw = request.raw.rawHeaders
  let headerBytes = 0
  for (const field of raw) headerBytes += field.length + 2
  if (headerBytes > HEADER_LIMIT_BYTES || raw.length > 2 * MAX_HEADER_FIELDS) {
    throw new HttpError('headers_too_large', MESSAGES.headersTooLarge)
  }
  const headers = request.raw.headersDistinct
  for (const name of SINGLE_HEADERS) {
    if ((headers[name]?.length ?? 0) > 1) throw new HttpError('validation_failed', `${name}: must be sent once`)
  }
  done()
}
