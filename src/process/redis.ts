/**
 * The one Redis client of an instance (REDIS_URL), connected by the process and handed to the
 * app, where the per-key rate limit and the count of failed authentications share it.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Redis as RedisClient } from 'ioredis'

const REDIS_TIMEOUT_MS = 250
const CONNECT_TIMEOUT_MS = 1_000

/**
 * Opens the client. Waits up to a second for the first connection, so the first
 * requests are counted too; Redis still down then is a warning, and ioredis keeps
 * reconnecting.
 * @example const redis = await connectRedis('redis://127.0.0.1:6379', logger)
 */
export async function connectRedis (url: string, logger: FastifyBaseLogger): Promise<RedisClient> {
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
  redis.on('error', () => {}) // reported by the counts that fail, not at each reconnection attempt
  try {
    await redis.connect()
  } catch (err) {
    logger.warn({ err: { message: (err as Error).message } },
      'Redis is unreachable: rate limits and failed authentications are counted per process until it answers')
  }
  return redis
}
