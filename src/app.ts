/**
 * buildApp wires the service together and returns the Fastify instance; it never
 * listens (src/process/server.ts does), so tests build the very same app.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { GETPET_DEPRECATED_AT, type Config } from './config.js'
import { expiryByName } from './domain/api-keys/lifecycle.js'
import { ApiKeyVerifier } from './domain/api-keys/verifier.js'
import { PetCatalogue } from './domain/pets.js'
import { buildPipeline } from './http/pipeline.js'
import { connectRedis } from './http/redis.js'
import { Metrics } from './http/plugins/metrics.js'
import { registerApiDocument, registerDocsPage, registerMetaRoutes } from './http/routes/meta.js'
import { registerPetRoutes } from './http/routes/pets.js'
import { REQUEST_TIMEOUTS, type RequestTimeouts } from './schemas/limits.js'
import type { Store } from './store/store.js'

export interface AppOptions {
  config: Config
  store: Store
  logger: FastifyBaseLogger
  /** The clock of the sunset check; tests move it. */
  now?: () => Date
  /** Slow-client bounds; tests shorten them. */
  timeouts?: RequestTimeouts
  /** A span per request, when the process exports traces (src/process/tracing.ts). */
  traces?: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts the graceful shutdown: /readyz answers 503 from now on. */
    startDraining: () => void
    /** This process's counts, scraped on the metrics listener (src/process/metrics-listener.ts), never on the API port. */
    metrics: Metrics
  }
}

/** The service's Fastify instance, with its decorations. */
export type App = FastifyInstance

/**
 * @example const app = await buildApp({ config, store, logger }); await app.listen({ port: 0 })
 */
export async function buildApp ({ config, store, logger, now = () => new Date(), timeouts = REQUEST_TIMEOUTS, traces = false }: AppOptions): Promise<App> {
  const verifier = new ApiKeyVerifier(store, { readWrite: config.apiKeys, readOnly: config.readOnlyApiKeys }, (err) => {
    logger.warn({ err: { message: (err as Error).message } }, 'the last use of API keys could not be recorded')
  })
  const metrics = new Metrics(store, async () => expiryByName(await store.listApiKeys()))
  const redis = config.redisUrl === undefined ? undefined : await connectRedis(config.redisUrl, logger)
  let draining = false
  const app = await buildPipeline({ config, logger, verifier, metrics, redis, now, timeouts, traces, isDraining: () => draining })
  app.decorate('startDraining', () => { draining = true })
  app.decorate('metrics', metrics)
  if (redis !== undefined) app.addHook('onClose', async () => { redis.disconnect() })
  // After the requests in flight, before the store closes: the last uses since the last write.
  app.addHook('onClose', async () => { await verifier.close() })
  const catalogue = new PetCatalogue(store, await store.secret('cursor'))
  const meta = {
    store,
    publicBaseUrl: config.publicBaseUrl,
    stagingBaseUrl: config.stagingBaseUrl,
    isDraining: () => draining
  }

  await registerApiDocument(app)
  await registerDocsPage(app)

  registerPetRoutes(app, { catalogue, publicBaseUrl: config.publicBaseUrl, deprecatedAt: GETPET_DEPRECATED_AT, sunset: config.getPetSunset })
  registerMetaRoutes(app, meta)

  await app.ready()
  return app
}
