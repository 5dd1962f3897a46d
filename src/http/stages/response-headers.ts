import type { onRequestHookHandler } from 'fastify'
import { requiresKey } from './auth.js'

/**
 * Headers every response gets: no caching of anything behind a key (one caller's
 * animals must not be served to another by a shared cache), no MIME sniffing,
 * no framing, no referrer.
 */
const EVERY_ANSWER = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' }
/** The headers of every answer behind a key. */
const BEHIND_KEY = { ...EVERY_ANSWER, 'cache-control': 'no-store' }

/**
 * While the process drains, each response also closes its connection, so that clients
 * stop sending on connections about to be closed.
 * @example app.addHook('onRequest', responseHeaders(() => draining))
 */
export function responseHeaders (isDraining: () => boolean): onRequestHookHandler {
  return (request, reply, done) => {
    reply.headers(requiresKey(request) ? BEHIND_KEY : EVERY_ANSWER)
    if (isDraining()) reply.header('connection', 'close')
    done()
  }
}
