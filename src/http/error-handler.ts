/**
 * Where an error of a stage or a handler is answered with the spec's `{code, message, status}`
 * body, as errors.ts maps it (node-server.ts answers what Node's parser refuses, with the same HttpError).
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ConnectionWaitExceeded } from '../store/store-errors.js'
import { REFUSAL } from './stages/admission.js'
import { HttpError, toHttpError } from './errors.js'

/** Sends the Error body: for an answer that is no failure of the request (a draining readyz). */
export function sendError (reply: FastifyReply, error: HttpError): void {
  reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(error.toBody())
}

/**
 * Fastify's error handler: logs what the server is at fault for, then sends the Error body.
 * @example app.setErrorHandler(renderError)
 */
export function renderError (err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.aborted) {
    // The client closed the connection while sending its request (or was answered a 408 on
    // the socket): no one to answer, and no fault of the server's.
    reply.hijack()
    return
  }
  // A call that waited past POOL_WAIT for a connection: a refusal for load, as the admission stage's.
  if (err instanceof ConnectionWaitExceeded) {
    request.state.refused = 'pool_wait'
    sendError(reply, REFUSAL)
    return
  }
  const error = toHttpError(err)
  if (error.code === 'internal_error') {
    request.log.error({ err }, 'internal error')
  } else if (error.code === 'unavailable') {
    // A driver's failure, with its stack; a condition of the store's own (no id left), in its words.
    const cause = (err as Error).cause
    if (cause === undefined) request.log.warn(error.message)
    else request.log.warn({ err: cause }, 'store unavailable')
  }
  sendError(reply, error)
}
