import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { onRequestHookHandler } from 'fastify'

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Fastify's `genReqId`: the client's X-Request-Id when it is safe to echo and log, else a
 * new UUID. An id that may be an API key (a client pasting its key in the wrong header)
 * is never echoed, since the id is on every log line.
 * @example Fastify({ genReqId: requestIdGenerator((text) => verifier.mightBeApiKey(text)) })
 */
export function requestIdGenerator (mightBeApiKey: (text: string) => boolean) {
  return (request: IncomingMessage): string => {
    const sent = request.headers['x-request-id']
    return typeof sent === 'string' && CLIENT_ID.test(sent) && !mightBeApiKey(sent) ? sent : randomUUID()
  }
}

/**
 * Every response carries the id its log lines carry.
 * @example app.addHook('onRequest', stampRequestId)
 */
export const stampRequestId: onRequestHookHandler = (request, reply, done) => {
  reply.header('x-request-id', request.id)
  done()
}
