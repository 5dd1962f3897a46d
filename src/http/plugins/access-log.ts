import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { REQUEST_ID_LOG_LABEL } from './request-id.js'

/**
 * One log line per request. The route pattern stands in for the URL, so nothing a
 * client put in the path or the query (a misplaced key) reaches the log.
 *
 * The duration is logged in whole microseconds. Under load, a fresh fraction on every
 * line (milliseconds to 0.01) grew V8's old generation by about 12 bytes a request until
 * its next full collection, and whole numbers did not: about 10 MiB more peak memory
 * over 12 s of gets (docs/decisions.md).
 */
export function registerAccessLog (app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    logRequest(request, reply, reply.statusCode)
    done()
  })
}

/** The status logged for a client that closed its connection before its request was read, as nginx logs it. */
export const CLIENT_CLOSED_REQUEST = 499

/**
 * The request line; also written by the error handler for a request whose client left, which gets no response.
 * @example logRequest(request, reply, CLIENT_CLOSED_REQUEST)
 */
export function logRequest (request: FastifyRequest, reply: FastifyReply, status: number): void {
  // The root logger, with the id: request.log would be made a pino child for this line alone (src/logger.ts).
  // A literal key, checked against the label: a computed one makes V8 add every field one by one.
  request.server.log.info({
    requestId: request.id,
    method: request.method,
    route: request.routeOptions.url ?? '(no route)',
    status,
    micros: Math.round(reply.elapsedTime * 1000)
  } satisfies { [REQUEST_ID_LOG_LABEL]: string, [field: string]: unknown }, 'request')
}
