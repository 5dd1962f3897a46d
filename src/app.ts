/**
 * buildApp wires the service together and returns the Fastify instance; it never
 * listens (src/process/server.ts does), so tests build the very same app.
 */
import { createServer } from 'node:http'
import type { Socket } from 'node:net'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { GETPET_DEPRECATED_AT, type Config } from './config.js'
import { ApiKeyVerifier, expiryByName } from './domain/api-keys.js'
import { FAILED_AUTH_WINDOW_MS } from './domain/forged-keys.js'
import { PetCatalogue } from './domain/pets.js'
import { HttpError } from './http/errors.js'
import { errorHandling } from './http/error-handler.js'
import { clientErrorHandlerFor, frameworkErrorHandlerFor, writeErrorToSocket } from './http/protocol-errors.js'
import { connectRedis } from './http/redis.js'
import { WindowCounts } from './http/window-counts.js'
import { requestState, startRequestState } from './http/request-state.js'
import { checkHost, checkRequest } from './http/plugins/request-checks.js'
import { jsonBody } from './http/json-body.js'
import { routableUrl } from './http/routable-url.js'
import { authenticate, requireScope } from './http/plugins/auth.js'
import { deprecationHeaders, sunset } from './http/plugins/deprecation.js'
import { forgedKeyThrottle } from './http/plugins/forged-key-throttle.js'
import { Metrics, metricsHooks } from './http/plugins/metrics.js'
import { REQUEST_ID_LOG_LABEL, requestIdGenerator, stampRequestId } from './http/plugins/request-id.js'
import { perKeyRateLimit, RATE_LIMIT_WINDOW_MS } from './http/plugins/rate-limit.js'
import { responseHeaders } from './http/plugins/response-headers.js'
import { accessLog } from './http/plugins/access-log.js'
import { corsOrigins } from './http/plugins/cors.js'
import { compileValidator } from './http/validation.js'
import { API_DESCRIPTION, API_TITLE, registerDocsPage, registerMetaRoutes } from './http/routes/meta.js'
import { recordRouteMethods } from './http/routes/other-methods.js'
import { registerPetRoutes } from './http/routes/pets.js'
import { COMPONENTS } from './schemas/components.js'
import { BODY_LIMIT_BYTES, HEADER_LIMIT_BYTES, REQUEST_TIMEOUTS, type RequestTimeouts } from './schemas/limits.js'
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
  const deprecation = { sunset: config.getPetSunset, publicBaseUrl: config.publicBaseUrl, now }
  const metrics = new Metrics(store, async () => expiryByName(await store.listApiKeys()))
  const redis = config.redisUrl === undefined ? undefined : await connectRedis(config.redisUrl, logger)
  const failures = new WindowCounts({ windowMs: FAILED_AUTH_WINDOW_MS, redis, redisPrefix: `${config.redisKeyPrefix}auth-failures:`, counted: 'failed authentications' })
  const throttle = forgedKeyThrottle({ verifier, counts: failures, onThrottled: () => { metrics.authThrottled.inc() } })
  let draining = false
  // The hooks every request meets before its route, in this order (CORS, when on, between the two
  // lists); what the router refuses meets them too.
  const beforeCors = [startRequestState, stampRequestId, responseHeaders(() => draining), checkHost]
  const requests = new WindowCounts({ windowMs: RATE_LIMIT_WINDOW_MS, redis, redisPrefix: `${config.redisKeyPrefix}rate:`, counted: 'requests for the rate limit' })
  const fromAuth = [deprecationHeaders(deprecation), throttle.check, authenticate(verifier, throttle.noteFailure),
    perKeyRateLimit(config.rateLimit, requests), requireScope, checkRequest]
  const beforeRoute = [...beforeCors, ...fromAuth]
  const app = Fastify({
    loggerInstance: logger,
    // Only these proxies' X-Forwarded-For is believed (request.ip); none by default, so a client cannot pose as another.
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    // One line per request, from the access log, without the query string.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: REQUEST_ID_LOG_LABEL }),
    genReqId: requestIdGenerator((text) => verifier.mightBeApiKey(text)),
    rewriteUrl: routableUrl,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // HEAD wherever GET is routed (RFC 9110 §9.1), but on the API's own paths (src/http/routes/pets.ts).
    exposeHeadRoutes: true,
    // While draining, requests already on an open connection are served, not refused with a bare 503.
    return503OnClosing: false,
    // A long petId reaches its route (a 400 from validation, a 414 from the request checks with getPet's headers), never a 404.
    routerOptions: { maxParamLength: HEADER_LIMIT_BYTES },
    clientErrorHandler: clientErrorHandlerFor(timeouts),
    frameworkErrors: frameworkErrorHandlerFor(beforeRoute),
    // Bounded waits for slow clients; timeouts are checked every second, not every 30 s.
    serverFactory: (handler) => {
      const server = createServer({
        headersTimeout: timeouts.headersMs,
        requestTimeout: timeouts.requestMs,
        connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs / 4),
        maxHeaderSize: HEADER_LIMIT_BYTES,
        // A missing Host is answered by the request checks, with the Error body, not by Node's bare 400.
        requireHostHeader: false
      }, handler)
      // Node answers these with a bare 417 or a dropped connection; RFC 9110 §10.1.1 lets a
      // server ignore an expectation it does not know, and CONNECT is no method of this API.
      server.on('checkExpectation', handler)
      // A 405 carries Allow (RFC 9110 §15.5.6); a CONNECT names no path, so it lists what the server answers on any.
      server.on('connect', (_request, socket: Socket) => {
        writeErrorToSocket(socket, new HttpError('method_not_allowed', 'CONNECT: is not allowed; this is no proxy', { allow: 'GET, HEAD, POST' }))
      })
      return server
    }
  })

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

  // Before any hook or route: the request's span is open, and current, in all of them. Imported
  // only when on, so that off no part of OpenTelemetry is loaded.
  if (traces) await app.register((await import('./http/plugins/request-spans.js')).requestSpans)
  app.setValidatorCompiler(compileValidator)
  // Routes refer to these by $ref: the serializer resolves them, the document names them as components.
  for (const schema of COMPONENTS) app.addSchema(schema)
  await app.register(jsonBody)
  await app.register(errorHandling)
  await app.register(requestState)
  // First: a client that leaves during any later hook still gets its line.
  await app.register(accessLog)
  for (const hook of beforeCors) app.addHook('onRequest', hook)
  // A preflight carries no key: it is answered before authentication.
  if (config.corsOrigins.length > 0) await app.register(corsOrigins, { origins: config.corsOrigins })
  for (const hook of fromAuth) app.addHook('onRequest', hook)
  // Then the sunset, which needs the caller.
  await app.register(sunset, deprecation)
  await app.register(metricsHooks, { metrics })

  // Every path registered from here on answers its other methods with 405 and Allow.
  const answerOtherMethods = recordRouteMethods(app)
  await app.register(swagger, {
    // A component is named by its schema's $id (Pet, NewPet, …) rather than def-0, def-1.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: API_TITLE,
        version: '1.0.0',
        license: { name: 'MIT', identifier: 'MIT' },
        description: API_DESCRIPTION
      },
      tags: [{ name: 'pets', description: 'The animals of the catalogue.' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key: `Authorization: Bearer <API key>`.' }
        }
      },
      security: [{ bearerAuth: [] }],
      // Paths are relative to the base address, which ends in /v1 (the spec's servers): /pets, not /v1/pets.
      servers: [{ url: '/v1' }]
    }
  })
  await registerDocsPage(app)

  registerPetRoutes(app, { catalogue, publicBaseUrl: config.publicBaseUrl, deprecatedAt: GETPET_DEPRECATED_AT, sunset: config.getPetSunset })
  registerMetaRoutes(app, meta)
  answerOtherMethods()

  await app.ready()
  return app
}
