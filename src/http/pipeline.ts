/**
 * The request path, written down once: every stage a request meets, in the order it meets them,
 * from the socket to its log line. Fastify's lifecycle does the ordering (the server's options, the
 * onRequest hooks in the order they are added, the body, the handler, onSend, onResponse); this
 * file only names the stages. A request the router refuses (no route, another method, a target it
 * cannot read) meets the same stages, and the catch-all answers it where a handler would.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'
import type { Registry } from 'prom-client'
import type { ApiKeyVerifier } from '../domain/api-keys/verifier.js'
import { FAILED_AUTH_WINDOW_MS } from '../domain/failed-authentications.js'
import type { PetCatalogue } from '../domain/pets.js'
import { COMPONENTS } from '../schemas/components.js'
import { BODY_LIMIT_BYTES, HEADER_LIMIT_BYTES, RATE_LIMIT_WINDOW_MS, type RequestTimeouts } from '../schemas/limits.js'
import type { ConnectionWaits } from '../store/store.js'
import { admitUnlessBehind, type LoopThread } from './stages/admission.js'
import { authenticate, requireBearer, requireScope } from './stages/auth.js'
import { deprecationHeaders, refuseAfterSunset } from './stages/deprecation.js'
import { renderError } from './error-handler.js'
import { forgedKeyThrottle } from './stages/forged-key-throttle.js'
import { holdIdempotencyKeys } from './stages/idempotency-hold.js'
import { JSON_CONTENT_TYPE, parseJsonBody } from './json-body.js'
import { clientErrorHandlerFor, serverFactoryFor } from './node-server.js'
import { perKeyRateLimit } from './stages/rate-limit.js'
import { checkHost, checkRequest } from './stages/request-checks.js'
import { requestIdGenerator, stampRequestId } from './stages/request-id.js'
import { startRequestState } from './stages/request-state.js'
import { responseHeaders } from './stages/response-headers.js'
import { routableUrl } from './routable-url.js'
import { compileValidator } from './validation.js'
import { WindowCounts } from './window-counts.js'
import { accessLog } from './plugins/access-log.js'
import { apiDocument } from './plugins/api-document.js'
import { corsOrigins } from './plugins/cors.js'
import { RequestMetrics, requestMetrics } from './plugins/metrics.js'
import { unroutedAnswers } from './plugins/unrouted.js'

/** What the stages read of the configuration: src/config.ts documents each. */
export interface PipelineConfig {
  trustProxy: readonly string[]
  corsOrigins: readonly string[]
  rateLimit: number
  redisKeyPrefix: string
  getPetSunset: Date
  publicBaseUrl: string | undefined
  stagingBaseUrl: string | undefined
  maxQueueDelay: number | undefined
  keepAliveTimeout: number
}

export interface PipelineOptions {
  config: PipelineConfig
  logger: FastifyBaseLogger
  verifier: ApiKeyVerifier
  catalogue: PetCatalogue
  /** The store's calls waiting for a connection, which the admission stage reads. */
  waits: ConnectionWaits
  /** The event loop's thread's times, by which the admission stage tells its own work from waits. */
  loopThread: LoopThread
  /** The process's registry, where the requests are counted. */
  registry: Registry
  /** REDIS_URL's client: the counts of the throttle and the rate limit shared by every instance; without it, per process. */
  redis: RedisClient | undefined
  /** The clock of the sunset. */
  now: () => Date
  /** Slow-client bounds. */
  timeouts: RequestTimeouts
  /** A span per request, when the process exports traces (src/process/tracing.ts). */
  traces: boolean
  isDraining: () => boolean
}

/**
 * The Fastify instance with every stage in place; the routes come next.
 * @example const app = await buildPipeline(options); registerPetRoutes(app, petOptions); await app.ready()
 */
export async function buildPipeline (options: PipelineOptions): Promise<FastifyInstance> {
  const { config, verifier, redis } = options
  const metrics = new RequestMetrics(options.registry)
  const deprecation = { sunset: config.getPetSunset, publicBaseUrl: config.publicBaseUrl, now: options.now }
  const app = Fastify({
    // The socket: Node's parser, bounded; what it refuses is answered on the socket, no request made.
    serverFactory: serverFactoryFor(options.timeouts, config.keepAliveTimeout * 1000),
    clientErrorHandler: clientErrorHandlerFor(options.timeouts),
    bodyLimit: BODY_LIMIT_BYTES,
    // While draining, requests already on an open connection are served, not refused with a bare 503.
    return503OnClosing: false,
    // Only these proxies' X-Forwarded-For is believed (request.ip); none by default, so a client cannot pose as another.
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    // The request id, on every log line of the request as `requestId`.
    genReqId: requestIdGenerator((text) => verifier.mightBeApiKey(text)),
    requestIdHeader: false,
    loggerInstance: options.logger,
    // One line per request, the access log's, without the query string.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // The router: every target reaches a route or the catch-all, so every request meets every stage.
    rewriteUrl: routableUrl,
    // HEAD wherever GET is routed (RFC 9110 §9.1), but on the API's own paths (src/http/routes/pets.ts).
    exposeHeadRoutes: true,
    // A long petId reaches its route (a 400 from validation, a 414 from the request checks with getPet's headers), never a 404.
    routerOptions: { maxParamLength: HEADER_LIMIT_BYTES }
  })

  // The request's span, open and current in every later stage; imported only when on, so that off no part of OpenTelemetry is loaded.
  if (options.traces) await app.register((await import('./plugins/request-spans.js')).requestSpans)
  // The log line is the last stage (onResponse); set up first, so a client that leaves during any later one still gets its line.
  await app.register(accessLog)
  app.decorateRequest('state')
  app.addHook('onRequest', startRequestState)
  app.addHook('onRequest', stampRequestId)
  app.addHook('onRequest', responseHeaders(options.isDraining))
  // Before anything builds a URL from Host (getPet's Link, on its 401 too).
  app.addHook('onRequest', checkHost)
  // A preflight carries no key: it is answered before authentication.
  if (config.corsOrigins.length > 0) await app.register(corsOrigins, { origins: config.corsOrigins })
  // Before auth and the request checks, so that their 401, 400, 414 and 431 carry getPet's headers too.
  app.addHook('onRequest', deprecationHeaders(deprecation))
  // 401 before any check of the request: a caller without a key learns nothing of our rules (RFC 6750 §3).
  app.addHook('onRequest', requireBearer)
  // Before anything is looked up or read: a request the service cannot serve in time is refused now, cheaply.
  if (config.maxQueueDelay !== undefined) {
    const admission = admitUnlessBehind(config.maxQueueDelay, options.waits, options.loopThread)
    app.addHook('onRequest', admission.check)
    app.addHook('onClose', (_app, done) => { admission.stop(); done() })
  }
  const failedAuths = new WindowCounts({ windowMs: FAILED_AUTH_WINDOW_MS, redis, redisPrefix: `${config.redisKeyPrefix}auth-failures:`, counted: 'failed authentications' })
  const throttle = forgedKeyThrottle({ verifier, counts: failedAuths, onThrottled: () => { metrics.authThrottled.inc() } })
  app.addHook('onRequest', throttle.check)
  app.addHook('onRequest', authenticate(verifier, throttle.noteFailure))
  const requestCounts = new WindowCounts({ windowMs: RATE_LIMIT_WINDOW_MS, redis, redisPrefix: `${config.redisKeyPrefix}rate:`, counted: 'requests for the rate limit' })
  // Only callers with a valid key are counted, and every answer to them from here on counts.
  app.addHook('onRequest', perKeyRateLimit(config.rateLimit, requestCounts))
  // Before the request checks and the body: a key without the scope learns no more.
  app.addHook('onRequest', requireScope)
  app.addHook('onRequest', checkRequest)
  // After auth: 410 only for a caller with a valid key.
  app.addHook('onRequest', refuseAfterSunset(deprecation))
  await app.register(requestMetrics, { metrics })
  // A create's Idempotency-Key, held from here until its answer goes out: hooks of that route alone.
  app.addHook('onRoute', holdIdempotencyKeys(options.catalogue))
  // The route: its body read as JSON and its parts checked by its schema (src/schemas), then its
  // handler (src/http/routes/); a request no route takes, the catch-all.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: 'buffer' }, parseJsonBody)
  app.setValidatorCompiler(compileValidator)
  // Routes refer to these by $ref: the serializer resolves them, the OpenAPI document names them as components.
  for (const schema of COMPONENTS) app.addSchema(schema)
  // Before the routes, which each announces as it is added: the catch-all learns their paths and
  // methods, the OpenAPI document collects them; the document and the docs page are routes too.
  await app.register(unroutedAnswers, { maxParamLength: HEADER_LIMIT_BYTES })
  await app.register(apiDocument, { publicBaseUrl: config.publicBaseUrl, stagingBaseUrl: config.stagingBaseUrl })
  // The error of any stage or handler, as the Error body.
  app.setErrorHandler(renderError)
  return app
}
