/**
 * Deprecated operations (route config `sunset`): every response, errors and 401s
 * included, carries Deprecation (RFC 9745), Sunset (RFC 8594) and Link; from the
 * sunset instant on the operation answers 410 Gone.
 */
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { AppError } from '../../domain/errors.js'
import { baseUrlOf, docsUrlOf } from '../public-url.js'

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
  /** The deprecated routes, gathered by registerSunset as they are declared. */
  routes: DeprecatedRoute[]
}

export interface DeprecatedRoute {
  method: string
  /** The route's URL pattern as a regular expression: `/v1/pets/:petId` matches any one segment. */
  path: RegExp
  deprecatedAt: Date
}

/**
 * Run before the request checks and auth, so that their 400, 414, 431 and 401 carry the headers too.
 * @example app.addHook('onRequest', deprecationHeaders({ sunset, publicBaseUrl: undefined, now: () => new Date() }))
 */
export function deprecationHeaders (options: DeprecationOptions): onRequestHookHandler {
  const sunset = options.sunset.toUTCString()
  // The headers depend only on the route and the base address: the last ones made are kept.
  let last: { deprecatedAt: Date, base: string, headers: Record<string, string> } | undefined
  return (request, reply, done) => {
    const deprecatedAt = request.routeOptions.config.deprecatedAt ?? (request.is404 ? namedRoute(request, options.routes)?.deprecatedAt : undefined)
    if (deprecatedAt === undefined) return done()
    const base = baseUrlOf(request, options.publicBaseUrl)
    if (last?.deprecatedAt !== deprecatedAt || last.base !== base) {
      last = {
        deprecatedAt,
        base,
        headers: {
          deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}`,
          sunset,
          link: `<${docsUrlOf(base)}>; rel="deprecation"; type="text/html", <${base}/pets>; rel="successor-version"`
        }
      }
    }
    reply.headers(last.headers)
    done()
  }
}

/**
 * The deprecated route a request names when the router could not read it (bad percent-encoding
 * such as `/v1/pets/%ZZ`): its 400, and its 401, are still responses of that operation.
 */
function namedRoute (request: FastifyRequest, routes: readonly DeprecatedRoute[]): DeprecatedRoute | undefined {
  const path = request.url.split('?', 1)[0]!
  return routes.find((route) => route.method === request.method && route.path.test(path))
}

/** Gathers the deprecated routes as they are declared; its hook runs after auth: 410 only for a caller with a valid key. */
export function registerSunset (app: FastifyInstance, options: DeprecationOptions): void {
  app.addHook('onRoute', ({ method, url, config }) => {
    const deprecatedAt = (config as { deprecatedAt?: Date } | undefined)?.deprecatedAt
    if (deprecatedAt === undefined) return
    const path = new RegExp(`^${url.split('/').map((segment) => segment.startsWith(':') ? '[^/]+' : escapeRegExp(segment)).join('/')}$`)
    for (const one of [method].flat()) options.routes.push({ method: one, path, deprecatedAt })
  })
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.deprecatedAt === undefined || options.now() < options.sunset) return done()
    throw new AppError('gone', `${request.method} ${request.routeOptions.url}: was removed on ${options.sunset.toISOString()}; use GET /v1/pets with the status filter`)
  })
}

function escapeRegExp (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
