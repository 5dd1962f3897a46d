/**
 * Where an error of a handler or a hook, or an unknown route, is answered with the spec's
 * `{code, message, status}` body, as errors.ts maps it (protocol-errors.ts answers what Node
 * rejects before any route runs, with the same HttpError).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError, toHttpError } from './errors.js'

/** Sends the Error body: for an answer that is no failure of the request (a draining readyz). */
export function sendError (reply: FastifyReply, error: HttpError): void {
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
  })

  // Answered in onRequest, after the app's hooks (auth first) and before any body is read: a POST
  // to an unknown path is a 404 whatever it carries. Fastify runs a not-found handler's own hooks
  // of every lifecycle stage (its types list only preValidation and preHandler).
  const notFound = (request: FastifyRequest): HttpError =>
    new HttpError('not_found', `${request.method} ${pathOf(request.originalUrl)}: no such route; see /v1/openapi.json`)
  const refuseUnknownRoute: onRequestHookHandler = (request, _reply, done) => { done(notFound(request)) }
  app.setNotFoundHandler({ onRequest: refuseUnknownRoute } as NotFoundOptions, (request, reply) => { sendError(reply, notFound(request)) })
}

/** @example await app.register(errorHandling) */
export const errorHandling = fp(errorHandlingPlugin, { name: 'petstore-error-handling' })

type NotFoundOptions = Parameters<FastifyInstance['setNotFoundHandler']>[0] & { onRequest?: onRequestHookHandler }

function pathOf (url: string): string {
  const path = url.split('?')[0] ?? ''
  return path.length > 100 ? `${path.slice(0, 100)}…` : path
}
