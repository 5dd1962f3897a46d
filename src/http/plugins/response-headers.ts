import type { FastifyInstance } from 'fastify'
import { requiresKey } from './auth.js'

/**
 * Headers every response gets: no caching of anything behind a key (one caller's
 * animals must not be served to another by a shared cache), no MIME sniffing,
 * no framing, no referrer.
 */
export function registerResponseHeaders (app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.headers({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      ...(requiresKey(request.url) ? { 'cache-control': 'no-store' } : {})
    })
  })
}
