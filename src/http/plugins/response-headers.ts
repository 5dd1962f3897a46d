import type { onRequestAsyncHookHandler } from 'fastify'
import { requiresKey } from './auth.js'

/**
 * Headers every response gets: no caching of anything behind a key (one caller's
 * animals must not be served to another by a shared cache), no MIME sniffing,
 * no framing, no referrer.
 */
const PUBLIC = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' }
/** The headers of every answer to a request that needs a key. */
const BEHIND_KEY = { ...PUBLIC, 'cache-control': 'no-store' }

/**
 * While the process drains, each response also closes its connection, so that clients
 * stop sending on connections about to be closed.
 * @example app.addHook('onRequest', responseHeaders(() => draining))
 */
export function responseHeaders (isDraining: () => boolean): onRequestAsyncHookHandler {
  return async (request, reply) => {
    reply.headers(requiresKey(request) ? BEHIND_KEY : PUBLIC)
    if (isDraining()) reply.header('connection', 'close')
  }
}
