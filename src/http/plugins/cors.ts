/**
 * CORS (@fastify/cors) for the origins of CORS_ORIGINS alone: their pages may call the
 * API and read its answers, errors included; any other origin gets no CORS header.
 */
import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/** What a page may send: the API's methods (HEAD is a 405 there) and the request headers it reads. */
const CORS_METHODS = ['GET', 'POST']
const CORS_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id']
/** The response headers a page may read, beside the ones every page may (Content-Type, …). */
const CORS_EXPOSED_HEADERS = ['Link', 'Location', 'Retry-After', 'X-Request-Id', 'Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy', 'Deprecation', 'Sunset']
// Ten minutes: a browser asks again that often per URL, and a change of these lists reaches pages as soon.
const CORS_MAX_AGE_SECONDS = 600

function isPreflight (request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
}

/**
 * A named origin's preflight is answered 204 at once; any other OPTIONS goes on to its usual
 * answer (401, 404 or 405).
 */
async function corsPlugin (app: FastifyInstance, { origins }: { origins: readonly string[] }): Promise<void> {
  const named = new Set(origins)
  const options: FastifyCorsOptions = {
    methods: CORS_METHODS,
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS
  }
  // The plugin routes OPTIONS on every path ('*') for its hook to answer preflights on; the hook
  // answers them on unknown paths without it, and this route would make OPTIONS on an unknown
  // path a known route (past auth, its body read): it is given a host no request has.
  app.addHook('onRoute', (route) => {
    if (route.url === '*' && route.method === 'OPTIONS') route.constraints = { host: /(?!)/ }
  })
  await app.register(cors, {
    delegator: (request, callback) => {
      const origin = request.headers.origin
      const allowed = origin !== undefined && named.has(origin)
      // `origin: false` sends no CORS header (but Vary: Origin); true echoes the request's Origin.
      callback(null, { ...options, origin: allowed, preflight: allowed && isPreflight(request) })
    }
  })
}

/** @example await app.register(corsOrigins, { origins: ['https://shop.example'] }) */
export const corsOrigins = fp<{ origins: readonly string[] }>(corsPlugin, { name: 'petstore-cors' })
