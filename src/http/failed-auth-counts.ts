/**
 * Failed authentications by client address, in fixed windows: in this process, or,
 * with REDIS_URL, in Redis and shared by every instance.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'

/** A count and the time left in its window. */
export interface FailureWindow {
  count: number
  resetInMs: number
}

// Enough addresses for a busy minute; past it the oldest window is forgotten first.
const LOCAL_ADDRESSES = 10_000

// One script each, so a count never lives without its expiry.
const ADD = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}`
const READ = `local n = redis.call('GET', KEYS[1])
return {n and tonumber(n) or 0, redis.call('PTTL', KEYS[1])}`

export interface FailedAuthCountsOptions {
  windowMs: number
  /** The shared client of REDIS_URL (src/http/redis.ts); undefined, counted in this process. */
  redis: RedisClient | undefined
  /** REDIS_KEY_PREFIX: each count is the key `<prefix>auth-failures:<address>`. */
  redisKeyPrefix: string
  logger: FastifyBaseLogger
}

/**
 * Counts in Redis when it answers, else in this process, with one warning an outage.
 * @example const counts = new FailedAuthCounts({ windowMs: 60_000, redis: undefined, redisKeyPrefix: 'petstore:', logger: app.log })
 */
export class FailedAuthCounts {
  readonly #local = new Map<string, { count: number, resetAt: number }>()
  readonly #options: FailedAuthCountsOptions
  // Already down at start: connectRedis has said so.
  #redisFailing: boolean

  constructor (options: FailedAuthCountsOptions) {
    this.#options = options
    this.#redisFailing = options.redis !== undefined && options.redis.status !== 'ready'
  }

  /** @example const { count } = await counts.read('192.0.2.7') */
  async read (address: string): Promise<FailureWindow> {
    return await this.#inRedis(READ, address) ?? this.#readLocal(address)
  }

  /** Counts one failure and returns the window with it. @example await counts.add('192.0.2.7') */
  async add (address: string): Promise<FailureWindow> {
    return await this.#inRedis(ADD, address) ?? this.#addLocal(address)
  }

  async #inRedis (script: string, address: string): Promise<FailureWindow | undefined> {
    const { redis, redisKeyPrefix, windowMs, logger } = this.#options
    if (redis === undefined) return undefined
    try {
      const [count, ttl] = await redis.eval(script, 1, `${redisKeyPrefix}auth-failures:${address}`, windowMs) as [number, number]
      this.#redisFailing = false
      // PTTL is negative for a missing key: nothing counted, nothing to wait for.
      return { count, resetInMs: Math.max(0, ttl) }
    } catch (err) {
      if (!this.#redisFailing) {
        this.#redisFailing = true
        logger.warn({ err: { message: (err as Error).message } }, 'failed authentications are counted per process: Redis does not answer')
      }
      return undefined
    }
  }

  #readLocal (address: string): FailureWindow {
    const window = this.#local.get(address)
    const now = Date.now()
    return window === undefined || window.resetAt <= now ? { count: 0, resetInMs: 0 } : { count: window.count, resetInMs: window.resetAt - now }
  }

  #addLocal (address: string): FailureWindow {
    const now = Date.now()
    let window = this.#local.get(address)
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.#options.windowMs }
      // Moved to the end: the map stays ordered by window start, oldest first.
      this.#local.delete(address)
      if (this.#local.size >= LOCAL_ADDRESSES) this.#local.delete(this.#local.keys().next().value!)
      this.#local.set(address, window)
    }
    window.count++
    return { count: window.count, resetInMs: window.resetAt - now }
  }
}
