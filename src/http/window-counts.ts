/**
 * Counts in fixed windows, per key: the per-API-key rate limit and the failed
 * authentications of each address. In this process, or, with REDIS_URL, in Redis and
 * shared by every instance; while Redis does not answer, in this process again.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'

/** A count and the time left in its window. */
export interface CountWindow {
  count: number
  resetInMs: number
}

// Enough keys for a busy minute; past it the oldest window is forgotten first.
const LOCAL_KEYS = 10_000

// One script each, so a count never lives without its expiry.
const ADD = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}`
const READ = `local n = redis.call('GET', KEYS[1])
return {n and tonumber(n) or 0, redis.call('PTTL', KEYS[1])}`

export interface WindowCountsOptions {
  windowMs: number
  /** The shared client of REDIS_URL (src/process/redis.ts); undefined, counted in this process. */
  redis: RedisClient | undefined
  /** Each count is the Redis key `<prefix><key>`: REDIS_KEY_PREFIX and what is counted (`rate:`). */
  redisPrefix: string
  /** What the warning of an outage says is counted per process ('failed authentications'). */
  counted: string
}

/**
 * Counts in Redis when it answers, else in this process, with one warning an outage.
 * @example const counts = new WindowCounts({ windowMs: 60_000, redis: undefined, redisPrefix: 'petstore:rate:', counted: 'requests' })
 */
export class WindowCounts {
  readonly #local = new Map<string, { count: number, resetAt: number }>()
  readonly #options: WindowCountsOptions
  // Already down at start: connectRedis has said so.
  #redisFailing: boolean

  constructor (options: WindowCountsOptions) {
    this.#options = options
    this.#redisFailing = options.redis !== undefined && options.redis.status !== 'ready'
  }

  /** @example const { count } = await counts.read('192.0.2.7', request.log) */
  async read (key: string, log: FastifyBaseLogger): Promise<CountWindow> {
    if (this.#options.redis === undefined) return this.#readLocal(key)
    return await this.#inRedis(this.#options.redis, READ, key, log) ?? this.#readLocal(key)
  }

  /** Counts one and returns the window with it. @example await counts.add('192.0.2.7', request.log) */
  async add (key: string, log: FastifyBaseLogger): Promise<CountWindow> {
    if (this.#options.redis === undefined) return this.#addLocal(key)
    return await this.#inRedis(this.#options.redis, ADD, key, log) ?? this.#addLocal(key)
  }

  async #inRedis (redis: RedisClient, script: string, key: string, log: FastifyBaseLogger): Promise<CountWindow | undefined> {
    const { redisPrefix, windowMs, counted } = this.#options
    try {
      const [count, ttl] = await redis.eval(script, 1, `${redisPrefix}${key}`, windowMs) as [number, number]
      this.#redisFailing = false
      // PTTL is negative for a missing key: nothing counted, nothing to wait for.
      return { count, resetInMs: Math.max(0, ttl) }
    } catch (err) {
      if (!this.#redisFailing) {
        this.#redisFailing = true
        log.warn({ err: { message: (err as Error).message } }, `${counted} are counted per process: Redis does not answer`)
      }
      return undefined
    }
  }

  #readLocal (key: string): CountWindow {
    const window = this.#local.get(key)
    const now = Date.now()
    return window === undefined || window.resetAt <= now ? { count: 0, resetInMs: 0 } : { count: window.count, resetInMs: window.resetAt - now }
  }

  #addLocal (key: string): CountWindow {
    const now = Date.now()
    let window = this.#local.get(key)
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.#options.windowMs }
      // Moved to the end: the map stays ordered by window start, oldest first.
      this.#local.delete(key)
      if (this.#local.size >= LOCAL_KEYS) this.#local.delete(this.#local.keys().next().value!)
      this.#local.set(key, window)
    }
    window.count++
    return { count: window.count, resetInMs: window.resetAt - now }
  }
}
