/**
 * The Node server under Fastify: its bounds on slow clients and large headers, and the spec's
 * Error body, written on the socket, for what its parser refuses before any request exists (a
 * malformed request line, oversized headers, a slow client, CONNECT) rather than Node's bare default.
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES, createServer, type RequestListener } from 'node:http'
import type { Socket } from 'node:net'
import { HEADER_LIMIT_BYTES, URL_LIMIT_BYTES, type RequestTimeouts } from '../schemas/limits.js'
import { MESSAGES } from '../schemas/messages.js'
import { HttpError } from './errors.js'
import { noteAnsweredOnSocket } from './plugins/access-log.js'

/**
 * Fastify's `serverFactory`: bounded waits for slow clients, checked every second rather than every
 * 30 s, and idle connections kept `keepAliveMs` (Fastify sets its own 72 s only on a server it
 * makes; Node's default is 5 s, shorter than any load balancer keeps its side open).
 * @example Fastify({ serverFactory: serverFactoryFor(REQUEST_TIMEOUTS, 120_000) })
 */
export function serverFactoryFor (timeouts: RequestTimeouts, keepAliveMs: number) {
  return (handler: RequestListener) => {
    const server = createServer({
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: keepAliveMs,
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs / 4),
      maxHeaderSize: HEADER_LIMIT_BYTES,
      // A missing Host is answered by the request checks, with the Error body, not by Node's bare 400.
      requireHostHeader: false
    }, handler)
    // Node answers these with a bare 417 or a dropped connection; RFC 9110 §10.1.1 lets a
    // server ignore an expectation it does not know, and CONNECT is no method of this API.
    server.on('checkExpectation', handler)
    // A 405 carries Allow (RFC 9110 §15.5.6); a CONNECT names no path, so it lists what the server answers on any.
    server.on('connect', (_request, socket: Socket) => {
      writeErrorToSocket(socket, new HttpError('method_not_allowed', 'CONNECT: is not allowed; this is no proxy', { allow: 'GET, HEAD, POST' }))
    })
    return server
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
        return new HttpError('uri_too_long', MESSAGES.uriTooLong)
      }
      return new HttpError('headers_too_large', MESSAGES.headersTooLarge)
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpError('request_timeout', MESSAGES.requestTimeout(timeouts))
    default:
      return new HttpError('validation_failed', 'request: is not valid HTTP/1.1')
  }
}

/** Writes the Error body, with the error's own headers (`Allow`), straight on a socket Node has taken from HTTP, then closes it. */
function writeErrorToSocket (socket: Socket, error: HttpError): void {
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
