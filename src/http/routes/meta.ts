/**
 * Around the API, no key needed: health, readiness, the OpenAPI document and the
 * interactive docs page. Metrics are on a listener of their own (src/process/metrics-listener.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { HttpError } from '../errors.js'
import type { Store } from '../../store/store.js'
import { sendError } from '../error-handler.js'
import { baseUrlOf } from '../public-url.js'

export interface MetaRoutesOptions {
  store: Store
  publicBaseUrl: string | undefined
  stagingBaseUrl: string | undefined
  /** True once shutdown has begun: /readyz answers 503 so load balancers stop sending. */
  isDraining: () => boolean
}

/** The OpenAPI document with `servers` for this deployment (production, then staging). */
export function openApiDocumentFor (app: FastifyInstance, request: FastifyRequest, options: MetaRoutesOptions): Record<string, unknown> {
  const servers = [{ url: baseUrlOf(request, options.publicBaseUrl), description: 'Production' }]
  if (options.stagingBaseUrl !== undefined) servers.push({ url: options.stagingBaseUrl, description: 'Staging' })
  return { ...app.swagger(), servers }
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

  app.get('/v1/openapi.json', { schema: hide, config: { operation: 'openapi' } }, async (request) =>
    openApiDocumentFor(app, request, options))

  app.get('/v1/openapi.yaml', { schema: hide, config: { operation: 'openapi' } }, async (request, reply) => {
    // The YAML writer is loaded on the first request for it, not carried by every instance.
    const { stringify } = await import('yaml')
    reply.type('application/yaml')
    return stringify(openApiDocumentFor(app, request, options))
  })
}
