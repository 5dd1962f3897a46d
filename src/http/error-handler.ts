/**
 * The only place an error becomes the spec's `{code, message, status}` body:
 * errors of handlers and hooks, unknown routes, and protocol-level rejections
 * that Node answers before any route runs.
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { AppError, isAppError } from '../domain/errors.js'
import { logClientGone, noteAnsweredOnSocket } from './plugins/access-log.js'

export const BODY_LIMIT_BYTES = 16 * 1024
export const HEADER_LIMIT_BYTES = 16 * 1024
export const URL_LIMIT_BYTES = 8 * 1024

/** How long a client may take to send its headers, and its whole request. */
export interface RequestTimeouts {
  headersMs: number
  requestMs: number
}

export const REQUEST_TIMEOUTS: RequestTimeouts = { headersMs: 10_000, requestMs: 30_000 }

// Fastify's own errors, by their stable codes (never by message text).
const FASTIFY_ERRORS: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('payload_too_large', `body: must be at most ${BODY_LIMIT_BYTES} bytes`),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('unsupported_media_type', 'Content-Type: must be application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError('malformed_json', 'body: is shorter or longer than its Content-Length'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new AppError('malformed_json', 'body: is empty; send a JSON object'),
  FST_ERR_BAD_URL: () => new AppError('validation_failed', 'path: is not a valid URL'),
  FST_ERR_MAX_PARAM_LENGTH: () => new AppError('uri_too_long', `request target: must be at most ${URL_LIMIT_BYTES} bytes`),
  FST_ERR_ASYNC_CONSTRAINT: () => new AppError('validation_failed', 'request: is not valid')
}

/** Turns any thrown value into the AppError to answer with; unknown errors are 500s. */
export function toAppError (err: unknown): AppError {
  if (isAppError(err)) return err
  const code = (err as FastifyError | undefined)?.code
  const known = code === undefined ? undefined : FASTIFY_ERRORS[code]
  if (known !== undefined) return known()
  return new AppError('internal_error', 'the server failed to answer; the request id identifies it in the logs')
}

/**
 * Sends the Error body. Synchronous handlers call it and return nothing (a returned reply
 * is a thenable, which Fastify waits on with listeners on the response); async handlers
 * throw the AppError instead, since Fastify sends again what an async handler returns.
 */
export function sendError (reply: FastifyReply, error: AppError): void {
  reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(error.toBody())
}

/**
 * @example registerErrorHandling(app) // once, before the routes
 */
export function registerErrorHandling (app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (request.raw.aborted) {
      // The client closed the connection while sending its request (or was answered a 408 on
      // the socket): no one to answer, and no fault of the server's.
      logClientGone(request, reply)
      reply.hijack()
      return
    }
    const error = toAppError(err)
    if (error.code === 'internal_error') {
      request.log.error({ err }, 'internal error')
    } else if (error.code === 'unavailable') {
      // A driver's failure, with its stack; a condition of the store's own (no id left), in its words.
      const cause = (err as Error).cause
      if (cause === undefined) request.log.warn(error.message)
      else request.log.warn({ err: cause }, 'store unavailable')
    }
    sendError(reply, error)
  })

  // Answered in onRequest, after the app's hooks (auth first) and before any body is read: a POST
  // to an unknown path is a 404 whatever it carries. Fastify runs a not-found handler's own hooks
  // of every lifecycle stage (its types list only preValidation and preHandler).
  const notFound = (request: FastifyRequest): AppError =>
    new AppError('not_found', `${request.method} ${pathOf(request.originalUrl)}: no such route; see /v1/openapi.json`)
  const refuseUnknownRoute: onRequestHookHandler = (request, _reply, done) => { done(notFound(request) as unknown as FastifyError) }
  app.setNotFoundHandler({ onRequest: refuseUnknownRoute } as NotFoundOptions, (request, reply) => { sendError(reply, notFound(request)) })
}

type NotFoundOptions = Parameters<FastifyInstance['setNotFoundHandler']>[0] & { onRequest?: onRequestHookHandler }

function pathOf (url: string): string {
  const path = url.split('?')[0] ?? ''
  return path.length > 100 ? `${path.slice(0, 100)}…` : path
}

/**
 * Fastify's `frameworkErrors`: what the router rejects before any hook runs (an
 * absolute-form target without a path, a parameter over its length limit; bad
 * percent-encoding is made routable by src/http/routable-url.ts) first meets the
 * hooks every request meets before its route, so
 * a bad Host is still a 400 and a caller without a key still a 401; then the Error body.
 * @example Fastify({ frameworkErrors: frameworkErrorHandlerFor([stampRequestId, authenticate(verifier)]) })
 */
export function frameworkErrorHandlerFor (beforeRoute: readonly onRequestHookHandler[]) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const run = (index: number) => (hookError?: unknown): void => {
      if ((hookError !== undefined && hookError !== null) || index === beforeRoute.length) {
        sendError(reply, toAppError(hookError ?? err))
        return
      }
      try {
        beforeRoute[index]!.call(request.server, request, reply, run(index + 1))
      } catch (thrown) {
        run(beforeRoute.length)(thrown)
      }
    }
    run(0)()
  }
}

// A request line longer than the URL limit, still without its end: the header
// overflow is the request target's doing, so it is a 414, not a 431.
const LONG_REQUEST_LINE = new RegExp(`^[A-Z]{1,20} [^\\r\\n]{${URL_LIMIT_BYTES},}`)

/** What Node's HTTP parser rejects before any route runs. */
function clientError (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, timeouts: RequestTimeouts): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      if (err.rawPacket !== undefined && LONG_REQUEST_LINE.test(err.rawPacket.subarray(0, URL_LIMIT_BYTES + 32).toString('latin1'))) {
        return new AppError('uri_too_long', `request target: must be at most ${URL_LIMIT_BYTES} bytes`)
      }
      return new AppError('headers_too_large', `headers: must be at most ${HEADER_LIMIT_BYTES} bytes in all`)
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout',
        `request: headers must arrive within ${timeouts.headersMs / 1000} s and the whole request within ${timeouts.requestMs / 1000} s`)
    default:
      return new AppError('validation_failed', 'request: is not valid HTTP/1.1')
  }
}

/**
 * Writes the Error body, with the error's own headers (`Allow`), straight on a socket Node has
 * taken from HTTP, then closes it.
 * @example writeErrorToSocket(socket, new AppError('request_timeout', 'request: too slow'))
 */
export function writeErrorToSocket (socket: Socket, error: AppError): void {
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
