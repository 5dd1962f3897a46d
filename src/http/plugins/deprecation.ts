/**
 * Deprecated operations (route config `sunset`): every response, errors and 401s
 * included, carries Deprecation (RFC 9745), Sunset (RFC 8594) and Link; from the
 * sunset instant on the operation answers 410 Gone.
 */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import { HttpError } from '../errors.js'
import { baseUrlOf, docsUrlOf } from '../public-url.js'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on a deprecated route: the instant it was deprecated. */
    deprecatedAt?: Date
  }
}

export interface DeprecationOptions {
  sunset: Date
  publicBaseUrl: string | undefined
  /** The clock; injectable so tests can stand after the sunset. */
  now: () => Date
}

/**
 * The headers of a deprecated operation's answers, for the API's base address (`https://host/v1`).
 * @example deprecationHeaderValues(GETPET_DEPRECATED_AT, sunset.toUTCString(), 'http://localhost:8080/v1')
 */
function deprecationHeaderValues (deprecatedAt: Date, sunset: string, base: string): Record<string, string> {
  return {
    deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}`,
    sunset,
    link: `<${docsUrlOf(base)}>; rel="deprecation"; type="text/html", <${base}/pets>; rel="successor-version"`
  }
}

/**
 * Run before the request checks and auth, so that their 400, 414, 431 and 401 carry the headers too.
 * @example app.addHook('onRequest', deprecationHeaders({ sunset, publicBaseUrl: undefined, now: () => new Date() }))
 */
export function deprecationHeaders (options: DeprecationOptions): onRequestAsyncHookHandler {
  const sunset = options.sunset.toUTCString()
  return async (request, reply) => {
    const deprecatedAt = request.routeOptions.config.deprecatedAt
    if (deprecatedAt === undefined) return
    reply.headers(deprecationHeaderValues(deprecatedAt, sunset, baseUrlOf(request, options.publicBaseUrl)))
  }
}

/** Registered after auth: 410 only for a caller with a valid key. */
async function sunsetPlugin (app: FastifyInstance, options: DeprecationOptions): Promise<void> {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.deprecatedAt === undefined || options.now() < options.sunset) return done()
    throw new HttpError('gone', `${request.method} ${request.routeOptions.url}: was removed on ${options.sunset.toISOString()}; use GET /v1/pets with the status filter`)
  })
}

/** @example await app.register(sunset, options) */
export const sunset = fp<DeprecationOptions>(sunsetPlugin, { name: 'petstore-sunset' })
