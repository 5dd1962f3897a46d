/**
 * Per-API-key rate limit on @fastify/rate-limit: RATE_LIMIT requests in a 60 s window
 * per key, counted in this process or, with REDIS_URL, in Redis and shared by every
 * instance. Headers of the IETF httpapi RateLimit draft on every authenticated
 * response; 429 with Retry-After past the quota.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'
import { AppError } from '../../domain/errors.js'

const RATE_LIMIT_WINDOW_MS = 60_000
const REDIS_TIMEOUT_MS = 250
const CONNECT_TIMEOUT_MS = 1_000
const WARN_EVERY_MS = 10_000

/** The settings the limit reads from Config. */
export interface RateLimitOptions {
  /** Requests per window per key (RATE_LIMIT; 0 means the plugin is not registered). */
  limit: number
  /** REDIS_URL: counts shared through this Redis; unset, counted in this process. */
  redisUrl: string | undefined
  /** REDIS_KEY_PREFIX: each count is the key `<prefix>rate:<key hash>`. */
  redisKeyPrefix: string
}

/**
 * Registers the limit as an onRequest hook added after auth, so only callers with a valid
 * key are counted, and before the route's own checks, so every answer to them counts.
 * @example await registerRateLimit(app, { limit: 6000, redisUrl: undefined, redisKeyPrefix: 'petstore:' })
 */
export async function registerRateLimit (app: FastifyInstance, { limit, redisUrl, redisKeyPrefix }: RateLimitOptions): Promise<void> {
  const redis = redisUrl === undefined ? undefined : await connectRedis(redisUrl, app.log)
  if (redis !== undefined) app.addHook('onClose', async () => { redis.disconnect() })
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

/**
 * Opens the Redis client of the counts. Waits up to a second for the first connection,
 * so the first requests are counted too; Redis still down then is a warning, and
 * ioredis keeps reconnecting.
 * @example const redis = await connectRedis('redis://127.0.0.1:6379', app.log)
 */
async function connectRedis (url: string, logger: FastifyBaseLogger): Promise<RedisClient> {
  // Loaded only here: an instance without REDIS_URL does not carry the client in memory.
  const { Redis } = await import('ioredis')
  const redis = new Redis(url, {
    // Fail fast rather than queue: a request must not wait for Redis to come back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    lazyConnect: true
  })
  redis.on('error', () => {}) // reported by the failing count, at most every 10 s
  try {
    await redis.connect()
  } catch (err) {
    logger.warn({ err: { message: (err as Error).message } }, 'rate limit: Redis is unreachable; requests are not limited until it answers')
  }
  return redis
}
