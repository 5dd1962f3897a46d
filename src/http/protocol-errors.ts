/**
 * Protocol-level rejections, answered with the spec's Error body rather than Node's
 * bare default: what Node's parser refuses (a malformed request line, oversized
 * headers, a slow client) and what the router refuses before any hook runs.
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { HEADER_LIMIT_BYTES, URL_LIMIT_BYTES, type RequestTimeouts } from '../schemas/limits.js'
import { HttpError, toHttpError } from './errors.js'
import { sendError } from './error-handler.js'
import { noteAnsweredOnSocket } from './plugins/access-log.js'

/**
 * Fastify's `frameworkErrors`: what the router rejects before any hook runs (an
 * absolute-form target without a path, a parameter over its length limit; bad
 * percent-encoding is made routable by src/http/routable-url.ts) first meets the
 * hooks every request meets before its route, so
 * a bad Host is still a 400 and a caller without a key still a 401; then the Error body.
 * @example Fastify({ frameworkErrors: frameworkErrorHandlerFor([stampRequestId, authenticate(verifier)]) })
 */
export function frameworkErrorHandlerFor (beforeRoute: readonly onRequestAsyncHookHandler[]) {
  return async (err: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      for (const hook of beforeRoute) await hook.call(request.server, request, reply)
      sendError(reply, toHttpError(err))
    } catch (hookError) {
      sendError(reply, toHttpError(hookError))
    }
  }
}

// A request line longer than the URL limit, still without its end: the header
// overflow is the request target's doing, so it is a 414, not a 431.
const LONG_REQUEST_LINE = new RegExp(`^[A-Z]{1,20} [^\\r\\n]{${URL_LIMIT_BYTES},}`)

/** What Node's HTTP parser rejects before any route runs. */
function clientError (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, timeouts: RequestTimeouts): HttpError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      if (err.rawPacket !== undefined && LONG_REQUEST_LINE.test(err.rawPacket.subarray(0, URL_LIMIT_BYTES + 32).toString('latin1'))) {
        return new HttpError('uri_too_long', `request target: must be at most ${URL_LIMIT_BYTES} bytes`)
      }
      return new HttpError('headers_too_large', `headers: must be at most ${HEADER_LIMIT_BYTES} bytes in all`)
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpError('request_timeout',
        `request: headers must arrive within ${timeouts.headersMs / 1000} s and the whole request within ${timeouts.requestMs / 1000} s`)
    default:
      return new HttpError('validation_failed', 'request: is not valid HTTP/1.1')
  }
}

/**
 * Writes the Error body, with the error's own headers (`Allow`), straight on a socket Node has
 * taken from HTTP, then closes it.
 * @example writeErrorToSocket(socket, new HttpError('request_timeout', 'request: too slow'))
 */
export function writeErrorToSocket (socket: Socket, error: HttpError): void {
  const body = JSON.stringify(error.toBody())
  socket.end([
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${randomUUID()}`,
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    body
  ].join('\r\n'))
}

/**
 * Fastify's `clientErrorHandler`: writes the Error body on the raw socket, then closes it.
 * @example Fastify({ clientErrorHandler: clientErrorHandlerFor(REQUEST_TIMEOUTS) })
 */
export function clientErrorHandlerFor (timeouts: RequestTimeouts) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const error = clientError(err, timeouts)
    // A connection closed mid-request is the client's leaving (499), whatever is written after.
    if (err.code !== 'HPE_INVALID_EOF_STATE') noteAnsweredOnSocket(socket, error.status)
    writeErrorToSocket(socket, error)
  }
}
