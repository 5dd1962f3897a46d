/**
 * Where an error of a handler or a hook, or an unknown route, becomes the spec's
 * `{code, message, status}` body (protocol-errors.ts answers what Node rejects
 * before any route runs, with the same AppError).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { BODY_LIMIT_BYTES, URL_LIMIT_BYTES } from '../config.js'
import { AppError, isAppError } from '../domain/errors.js'
import { NoIdLeft, StoreUnavailable } from '../store/store-errors.js'
import fp from 'fastify-plugin'

// A store that cannot answer may soon; one out of ids needs an operator, and a client that
// honours Retry-After gives up at once.
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1
const NO_ID_LEFT_RETRY_AFTER_SECONDS = 3600

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
  if (err instanceof StoreUnavailable) {
    return new AppError('unavailable', 'the database is unavailable; retry later', { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) })
  }
  if (err instanceof NoIdLeft) {
    return new AppError('unavailable', err.message, { 'retry-after': String(NO_ID_LEFT_RETRY_AFTER_SECONDS) })
  }
  const code = (err as FastifyError | undefined)?.code
  const known = code === undefined ? undefined : FASTIFY_ERRORS[code]
  if (known !== undefined) return known()
  return new AppError('internal_error', 'the server failed to answer; the request id identifies it in the logs')
}

/** Sends the Error body: for an answer that is no failure of the request (a draining readyz). */
export function sendError (reply: FastifyReply, error: AppError): void {
  reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(error.toBody())
}

/**
 * @example registerErrorHandling(app) // once, before the routes
 */
async function errorHandlingPlugin (app: FastifyInstance): Promise<void> {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (request.raw.aborted) {
      // The client closed the connection while sending its request (or was answered a 408 on
      // the socket): no one to answer, and no fault of the server's.
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

/** @example await app.register(errorHandling) */
export const errorHandling = fp(errorHandlingPlugin, { name: 'petstore-error-handling' })

type NotFoundOptions = Parameters<FastifyInstance['setNotFoundHandler']>[0] & { onRequest?: onRequestHookHandler }

function pathOf (url: string): string {
  const path = url.split('?')[0] ?? ''
  return path.length > 100 ? `${path.slice(0, 100)}…` : path
}
