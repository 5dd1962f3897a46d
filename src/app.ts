/**
 * buildApp wires the service together and returns the Fastify instance; it never
 * listens nor connects (src/process/server.ts does both), so tests build the very same app.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'
import { Registry } from 'prom-client'
import { GETPET_DEPRECATED_AT, type Config } from './config.js'
import { ApiKeyVerifier } from './domain/api-keys/verifier.js'
import { PetCatalogue } from './domain/pets.js'
import { buildPipeline } from './http/pipeline.js'
import type { LoopThread } from './http/stages/admission.js'
import { registerMetaRoutes } from './http/routes/meta.js'
import { registerPetRoutes } from './http/routes/pets.js'
import { REQUEST_TIMEOUTS, type RequestTimeouts } from './schemas/limits.js'
import type { Store } from './store/store.js'

export interface AppOptions {
  config: Config
  store: Store
  logger: FastifyBaseLogger
  /** The process's metrics registry (src/process/process-metrics.ts), where the requests are counted; a registry of its own when none is scraped. */
  registry?: Registry
  /** REDIS_URL's client, connected by the process (src/process/redis.ts); the app never closes it. */
  redis?: RedisClient
  /** The event loop's thread's times (src/process/loop-thread.ts), by which the admission stage tells its own work from waits; none when not given. */
  loopThread?: LoopThread
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
  }
}

/** The service's Fastify instance, with its decorations. */
export type App = FastifyInstance

/**
 * @example const app = await buildApp({ config, store, logger }); await app.listen({ port: 0 })
 */
export async function buildApp (options: AppOptions): Promise<App> {
  const { config, store, logger } = options
  const verifier = new ApiKeyVerifier(store, { readWrite: config.apiKeys, readOnly: config.readOnlyApiKeys }, (err) => {
    logger.warn({ err: { message: (err as Error).message } }, 'the last use of API keys could not be recorded')
  })
  const catalogue = new PetCatalogue(store, await store.secret('cursor'))
  let draining = false
  const isDraining = (): boolean => draining
  const app = await buildPipeline({
    config,
    logger,
    verifier,
    catalogue,
    waits: store.waits,
    loopThread: options.loopThread ?? (() => undefined),
    registry: options.registry ?? new Registry(),
    redis: options.redis,
    now: options.now ?? (() => new Date()),
    timeouts: options.timeouts ?? REQUEST_TIMEOUTS,
    traces: options.traces ?? false,
    isDraining
  })
  app.decorate('startDraining', () => { draining = true })
  // After the requests in flight, before the store closes: the last uses since the last write.
  app.addHook('onClose', async () => { await verifier.close() })

  registerPetRoutes(app, { catalogue, publicBaseUrl: config.publicBaseUrl, deprecatedAt: GETPET_DEPRECATED_AT, sunset: config.getPetSunset })
  registerMetaRoutes(app, { store, isDraining })

  await app.ready()
  return app
}
