import type { Socket } from 'node:net'
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

/** The status logged for a client that closed its connection before it was answered, as nginx logs it. */
const CLIENT_CLOSED_REQUEST = 499

// The status Node's parser had written straight on a socket (a 408 when a body stalled):
// the request in progress there then ends as its client's leaving, and its line says what was answered.
const answeredOnSocket = new WeakMap<Socket, number>()

/** @example noteAnsweredOnSocket(socket, 408) // before the error is written on it */
export function noteAnsweredOnSocket (socket: Socket, status: number): void {
  answeredOnSocket.set(socket, status)
}

/**
 * The request line of a request whose client is gone: no response will be written, so
 * no onResponse hook will run. 499, or what was written on its socket.
 * @example if (reply.raw.destroyed) logClientGone(request, reply)
 */
export function logClientGone (request: FastifyRequest, reply: FastifyReply): void {
  logRequest(request, reply, answeredOnSocket.get(request.socket) ?? CLIENT_CLOSED_REQUEST)
}

function logRequest (request: FastifyRequest, reply: FastifyReply, status: number): void {
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
