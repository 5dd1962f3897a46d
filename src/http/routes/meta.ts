/**
 * Around the API, no key needed: health and readiness, for load balancers and probes. The
 * OpenAPI document and the docs page are a plugin of their own (src/http/plugins/api-document.ts);
 * metrics are on a listener of their own (src/process/metrics-listener.ts).
 */
import type { FastifyInstance } from 'fastify'
import { HttpError } from '../errors.js'
import type { Store } from '../../store/store.js'
import { sendError } from '../error-handler.js'

export interface MetaRoutesOptions {
  store: Store
  /** True once shutdown has begun: /readyz answers 503 so load balancers stop sending. */
  isDraining: () => boolean
}

export function registerMetaRoutes (app: FastifyInstance, options: MetaRoutesOptions): void {
  const hide = { hide: true }

  app.get('/healthz', { schema: hide, config: { operation: 'healthz' } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: hide, config: { operation: 'readyz' } }, async (_request, reply) => {
    // Sent, not thrown: the error handler would log each probe of a draining process as a store failure.
    if (options.isDraining()) {
      sendError(reply, new HttpError('unavailable', 'shutting down', { 'retry-after': '1' }))
      return reply
    }
    await options.store.ping()
    return { status: 'ready' }
  })
}
