/**
 * Per-API-key rate limit: RATE_LIMIT requests in a 60 s window per key, counted by the
 * window counter the throttle of forged keys uses (in this process or, with REDIS_URL,
 * in Redis and shared by every instance). Headers of the IETF httpapi RateLimit draft on
 * every authenticated response; 429 with Retry-After past the quota.
 * Not @fastify/rate-limit: counting with the window counter the throttle keeps anyway gave
 * get 1.10× the req/s and 0.90× the CPU a request in `npm run bench -- --baseline` (docs/decisions.md).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../../domain/errors.js'
import type { CountWindow, WindowCounts } from '../window-counts.js'

export const RATE_LIMIT_WINDOW_MS = 60_000

/**
 * The draft's two headers for a key's count in its window, and the seconds until it resets.
 * @example rateLimitHeaders(6000, { count: 1, resetInMs: 60_000 }).headers.ratelimit // '"default";r=5999;t=60'
 */
function rateLimitHeaders (limit: number, window: CountWindow): { headers: Record<string, string>, reset: number } {
  const reset = Math.max(1, Math.ceil(window.resetInMs / 1000))
  return {
    headers: {
      'ratelimit-policy': `"default";q=${limit};w=${RATE_LIMIT_WINDOW_MS / 1000}`,
      ratelimit: `"default";r=${Math.max(0, limit - window.count)};t=${reset}`
    },
    reset
  }
}

/** The settings the limit reads from Config. */
export interface RateLimitOptions {
  /** Requests per window per key (RATE_LIMIT; 0 means the plugin is not registered). */
  limit: number
  /** Counts by key hash, RATE_LIMIT_WINDOW_MS long (Redis keys `<REDIS_KEY_PREFIX>rate:<key hash>`). */
  counts: WindowCounts
}

/**
 * Registers the limit as an onRequest hook added after auth, so only callers with a valid
 * key are counted, and before the route's own checks, so every answer to them counts.
 * @example await app.register(perKeyRateLimit, { limit: 6000, counts })
 */
async function rateLimitPlugin (app: FastifyInstance, { limit, counts }: RateLimitOptions): Promise<void> {
  app.addHook('onRequest', async (request, reply) => {
    if (request.state.caller === undefined) return
    const window = await counts.add(request.state.caller.keyHash, request.log)
    const { headers, reset } = rateLimitHeaders(limit, window)
    reply.headers(headers)
    if (window.count > limit) {
      throw new AppError('rate_limited', `rate limit: at most ${limit} requests a minute per API key; retry in ${reset} s`,
        { 'retry-after': String(reset) })
    }
  })
}

/** @example await app.register(perKeyRateLimit, { limit: 6000, counts }) */
export const perKeyRateLimit = fp<RateLimitOptions>(rateLimitPlugin, { name: 'petstore-rate-limit' })
