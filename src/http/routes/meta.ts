/**
 * Around the API, no key needed: health and readiness, for load balancers and probes. The
 * OpenAPI document and the docs page are a plugin of their own (src/http/plugins/api-document.ts);
 * metrics are on a listener of their own (src/process/metrics-listener.ts).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { HttpError } from '../errors.js'
import type { Store } from '../../store/store.js'
import { sendError } from '../error-handler.js'

export interface MetaRoutesOptions {
  store: Store
  /** True once shutdown has begun: /readyz and /readyz/process answer 503 so load balancers stop sending. */
  isDraining: () => boolean
}

/**
 * `/healthz`: the process lives. `/readyz`: the process serves and its database answers, for a
 * balancer that should send elsewhere while it does not (HAProxy in front of several instances).
 * `/readyz/process`: the process serves, whatever its database, for Kubernetes' readiness probe:
 * a pod taken out of the Service could not answer its callers' requests with the 503 and
 * Retry-After of an outage (docs/decisions.md).
 * @example registerMetaRoutes(app, { store, isDraining: () => draining })
 */
export function registerMetaRoutes (app: FastifyInstance, options: MetaRoutesOptions): void {
  const hide = { hide: true }
  // Sent, not thrown: the error handler would log each probe of a draining process as a store failure.
  const refuseWhileDraining = (reply: FastifyReply): boolean => {
    if (!options.isDraining()) return false
    sendError(reply, new HttpError('unavailable', 'shutting down', { 'retry-after': '1' }))
    return true
  }

  app.get('/healthz', { schema: hide, config: { operation: 'healthz' } }, async () => ({ status: 'ok' }))

  app.get('/readyz', { schema: hide, config: { operation: 'readyz', probe: true } }, async (_request, reply) => {
    if (refuseWhileDraining(reply)) return reply
    await options.store.ping()
    return { status: 'ready' }
  })

  // No store call: it waits on nothing, so it answers as soon as the event loop reaches it.
  app.get('/readyz/process', { schema: hide, config: { operation: 'readyzProcess', probe: true } }, async (_request, reply) => {
    if (refuseWhileDraining(reply)) return reply
    return { status: 'serving' }
  })
}
