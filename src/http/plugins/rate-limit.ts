/**
 * Per-API-key rate limit: RATE_LIMIT requests in a fixed 60 s window per key,
 * counted in this process or, with REDIS_URL, in Redis and shared by every
 * instance. Headers of the IETF httpapi RateLimit draft on every authenticated
 * response; 429 with Retry-After past the quota.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'
import type { Logger } from 'pino'
import { AppError } from '../../domain/errors.js'

export const RATE_LIMIT_WINDOW_MS = 60_000
const REDIS_TIMEOUT_MS = 250
const CONNECT_TIMEOUT_MS = 1_000
const WARN_EVERY_MS = 10_000

/** One hit on a key's counter: the count in the current window and the time left in it. */
export interface WindowCount {
  count: number
  resetMs: number
}

export interface RateCounter {
  /** Synchronous when counted in this process, a promise when counted in Redis. */
  hit: (key: string) => WindowCount | Promise<WindowCount>
  close: () => Promise<void>
}

/**
 * Counts in this process. Only authenticated keys are counted, so the map is as
 * large as the set of valid keys.
 * @example const counter = memoryCounter(); counter.hit(keyHash)
 */
export function memoryCounter (windowMs = RATE_LIMIT_WINDOW_MS): RateCounter {
  const windows = new Map<string, { count: number, resetAt: number }>()
  return {
    hit (key) {
      const now = Date.now()
      let window = windows.get(key)
      if (window === undefined || window.resetAt <= now) {
        window = { count: 0, resetAt: now + windowMs }
        windows.set(key, window)
      }
      window.count++
      return { count: window.count, resetMs: window.resetAt - now }
    },
    async close () {}
  }
}

// INCR and the expiry in one atomic step: a counter can never be left without one.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`

/**
 * Counts in Redis, shared by every instance on the same server and prefix. Waits
 * up to a second for the first connection, so the first requests are counted too;
 * Redis still down then is a warning, and ioredis keeps reconnecting.
 * @example const counter = await connectRedisCounter('redis://127.0.0.1:6379', 'petstore:', logger)
 */
export async function connectRedisCounter (url: string, prefix: string, logger: Logger, windowMs = RATE_LIMIT_WINDOW_MS): Promise<RateCounter> {
  // Loaded only here: an instance without REDIS_URL does not carry the client in memory.
  const { Redis } = await import('ioredis')
  const redis: RedisClient = new Redis(url, {
    // Fail fast rather than queue: a request must not wait for Redis to come back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    lazyConnect: true
  })
  redis.on('error', () => {}) // reported by the failing hit, at most every 10 s
  try {
    await redis.connect()
  } catch (err) {
    logger.warn({ err: { message: (err as Error).message } }, 'rate limit: Redis is unreachable; requests are not limited until it answers')
  }
  return {
    async hit (key) {
      const [count, ttl] = await redis.eval(HIT_SCRIPT, 1, `${prefix}rate:${key}`, windowMs) as [number, number]
      return { count, resetMs: ttl }
    },
    async close () {
      redis.disconnect()
    }
  }
}

export interface RateLimitOptions {
  /** Requests per window per key (RATE_LIMIT; 0 means the plugin is not registered). */
  limit: number
  counter: RateCounter
}

/**
 * Registered after auth: only callers with a valid key are counted.
 * @example registerRateLimit(app, { limit: 6000, counter: memoryCounter() })
 */
export function registerRateLimit (app: FastifyInstance, { limit, counter }: RateLimitOptions): void {
  app.addHook('onClose', async () => { await counter.close() })
  const policy = `"default";q=${limit};w=${RATE_LIMIT_WINDOW_MS / 1000}`
  let lastWarning = 0
  // Fail open: an outage of the counter must not take the API down with it.
  const failOpen = (request: FastifyRequest, err: unknown): undefined => {
    if (Date.now() - lastWarning > WARN_EVERY_MS) {
      lastWarning = Date.now()
      request.log.warn({ err: { message: (err as Error).message } }, 'rate limit counter unavailable; requests are not limited')
    }
    return undefined
  }
  /** Announces the quota left; past the limit, the 429 to answer. */
  const apply = (reply: FastifyReply, window: WindowCount): FastifyError | undefined => {
    const reset = Math.max(1, Math.ceil(window.resetMs / 1000))
    reply.header('ratelimit-policy', policy)
    reply.header('ratelimit', `"default";r=${Math.max(0, limit - window.count)};t=${reset}`)
    if (window.count <= limit) return undefined
    return new AppError('rate_limited', `rate limit: at most ${limit} requests a minute per API key; retry in ${reset} s`,
      { 'retry-after': String(reset) }) as unknown as FastifyError
  }
  app.addHook('onRequest', (request, reply, done) => {
    if (request.state.caller === undefined) return done()
    let window: WindowCount | Promise<WindowCount>
    try {
      window = counter.hit(request.state.caller.keyHash)
    } catch (err) {
      return done(failOpen(request, err))
    }
    if (window instanceof Promise) window.then((counted) => done(apply(reply, counted)), (err: unknown) => done(failOpen(request, err)))
    else done(apply(reply, window))
  })
}
