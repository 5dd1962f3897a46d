/**
 * Per-API-key rate limit on @fastify/rate-limit: RATE_LIMIT requests in a 60 s window
 * per key, counted in this process or, with REDIS_URL, in Redis and shared by every
 * instance. Headers of the IETF httpapi RateLimit draft on every authenticated
 * response; 429 with Retry-After past the quota.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'
import { AppError } from '../../domain/errors.js'
import fp from 'fastify-plugin'

const RATE_LIMIT_WINDOW_MS = 60_000
const WARN_EVERY_MS = 10_000

/** The settings the limit reads from Config. */
export interface RateLimitOptions {
  /** Requests per window per key (RATE_LIMIT; 0 means the plugin is not registered). */
  limit: number
  /** The client of REDIS_URL (src/http/redis.ts): counts shared through it; undefined, counted in this process. */
  redis: RedisClient | undefined
  /** REDIS_KEY_PREFIX: each count is the key `<prefix>rate:<key hash>`. */
  redisKeyPrefix: string
}

/**
 * Registers the limit as an onRequest hook added after auth, so only callers with a valid
 * key are counted, and before the route's own checks, so every answer to them counts.
 * @example await registerRateLimit(app, { limit: 6000, redis: undefined, redisKeyPrefix: 'petstore:' })
 */
async function rateLimitPlugin (app: FastifyInstance, { limit, redis, redisKeyPrefix }: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    // No hook of the plugin's own on each route: those run after the app's, behind the sunset check.
    global: false,
    max: limit,
    timeWindow: RATE_LIMIT_WINDOW_MS,
    // Only called with a caller: the hook below skips requests without one.
    keyGenerator: (request) => request.state.caller!.keyHash,
    redis,
    nameSpace: `${redisKeyPrefix}rate:`
  })
  const count = app.createRateLimit()
  const policy = `"default";q=${limit};w=${RATE_LIMIT_WINDOW_MS / 1000}`
  let lastWarning = 0
  app.addHook('onRequest', async (request, reply) => {
    if (request.state.caller === undefined) return
    let window: Awaited<ReturnType<typeof count>>
    try {
      window = await count(request)
    } catch (err) {
      // Fail open: an outage of the counter must not take the API down with it.
      if (Date.now() - lastWarning > WARN_EVERY_MS) {
        lastWarning = Date.now()
        request.log.warn({ err: { message: (err as Error).message } }, 'rate limit counter unavailable; requests are not limited')
      }
      return
    }
    // Never true without an allowList; it narrows the type to a counted window.
    if (window.isAllowed) return
    // Written here: the plugin sends only the older draft's RateLimit-Limit/-Remaining/-Reset trio.
    const reset = Math.max(1, window.ttlInSeconds)
    reply.header('ratelimit-policy', policy)
    reply.header('ratelimit', `"default";r=${window.remaining};t=${reset}`)
    if (window.isExceeded) {
      throw new AppError('rate_limited', `rate limit: at most ${limit} requests a minute per API key; retry in ${reset} s`,
        { 'retry-after': String(reset) })
    }
  })
}

/** @example await app.register(perKeyRateLimit, { limit: 6000, redis: undefined, redisKeyPrefix: 'petstore:' }) */
export const perKeyRateLimit = fp<RateLimitOptions>(rateLimitPlugin, { name: 'petstore-rate-limit' })
