import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyRequest {
    /** The ids of the request's span, for its line: only with traces on (request-spans.ts). */
    traceIds?: { trace_id: string, span_id: string }
  }
}

/**
 * One log line per request (at `debug` for a refusal for load), through `request.log`, which carries its `requestId`. The route
 * pattern stands in for the URL, so nothing a client put in the path or the query (a misplaced
 * key) reaches the log.
 */
async function accessLogPlugin (app: FastifyInstance): Promise<void> {
  // A client that leaves before its answer is written gets no onResponse (Fastify writes
  // nothing to a closed socket): its line is written when its connection closes.
  app.addHook('onRequest', (request, reply, done) => {
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) logRequest(request, reply, answeredOnSocket.get(request.socket) ?? CLIENT_CLOSED_REQUEST)
    })
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    logRequest(request, reply, reply.statusCode)
    done()
  })
}

/** @example await app.register(accessLog) */
export const accessLog = fp(accessLogPlugin, { name: 'petstore-access-log' })

/** The status logged for a client that closed its connection before it was answered, as nginx logs it. */
const CLIENT_CLOSED_REQUEST = 499

// The status Node's parser had written straight on a socket (a 408 when a body stalled):
// the request in progress there then ends as its client's leaving, and its line says what was answered.
const answeredOnSocket = new WeakMap<Socket, number>()

/** @example noteAnsweredOnSocket(socket, 408) // before the error is written on it */
export function noteAnsweredOnSocket (socket: Socket, status: number): void {
  answeredOnSocket.set(socket, status)
}

function logRequest (request: FastifyRequest, reply: FastifyReply, status: number): void {
  // A refusal for load is counted by reason; its line would add to the load it refuses (docs/decisions.md).
  const level = request.state.refused === undefined ? 'info' : 'debug'
  const line = {
    method: request.method,
    route: request.state.route.url ?? '(no route)',
    status,
    // Whole microseconds: a fraction on every line cost about 10 MiB of peak memory under load (docs/decisions.md).
    micros: Math.round(reply.elapsedTime * 1000)
  }
  const traceIds = request.traceIds
  request.log[level](traceIds === undefined ? line : { ...line, ...traceIds }, 'request')
}
