import type { onRequestHookHandler } from 'fastify'
import { requiresKey } from './auth.js'

/**
 * Headers every response gets: no caching of anything behind a key (one caller's
 * animals must not be served to another by a shared cache), no MIME sniffing,
 * no framing, no referrer.
 */
const PUBLIC = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' }
const BEHIND_KEY = { ...PUBLIC, 'cache-control': 'no-store' }

/** @example app.addHook('onRequest', setResponseHeaders) */
export const setResponseHeaders: onRequestHookHandler = (request, reply, done) => {
  reply.headers(requiresKey(request) ? BEHIND_KEY : PUBLIC)
  done()
}
