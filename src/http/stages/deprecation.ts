/**
 * Deprecated operations (route config `deprecatedAt`): every response, errors and 401s
 * included, carries Deprecation (RFC 9745), Sunset (RFC 8594) and Link; from the
 * sunset instant on the operation answers 410 Gone.
 */
import type { onRequestHookHandler } from 'fastify'
import { MESSAGES } from '../../schemas/messages.js'
import { HttpError } from '../errors.js'
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
}

/**
 * The headers, on every answer of a deprecated route.
 * @example app.addHook('onRequest', deprecationHeaders({ sunset, publicBaseUrl: undefined, now: () => new Date() }))
 */
export function deprecationHeaders (options: DeprecationOptions): onRequestHookHandler {
  const sunset = options.sunset.toUTCString()
  return (request, reply, done) => {
    const deprecatedAt = request.state.route.config.deprecatedAt
    if (deprecatedAt === undefined) return done()
    const base = baseUrlOf(request, options.publicBaseUrl)
    reply.headers({
      deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}`,
      sunset,
      link: `<${docsUrlOf(base)}>; rel="deprecation"; type="text/html", <${base}/pets>; rel="successor-version"`
    })
    done()
  }
}

/**
 * 410 from the sunset on.
 * @example app.addHook('onRequest', refuseAfterSunset({ sunset, publicBaseUrl: undefined, now: () => new Date() }))
 */
export function refuseAfterSunset (options: DeprecationOptions): onRequestHookHandler {
  return (request, _reply, done) => {
    const route = request.state.route
    if (route.config.deprecatedAt === undefined || options.now() < options.sunset) return done()
    throw new HttpError('gone', MESSAGES.gone(request.method, route.url!, options.sunset))
  }
}
