/**
 * The Redis of the tests (TEST_REDIS_URL), through which instances share their rate-limit counts
 * and failed authentications.
 */
import { randomBytes } from 'node:crypto'
import { TcpProxy } from './tcp-proxy.js'

const TEST_REDIS_URL = process.env.TEST_REDIS_URL

/**
 * The skip of a describe that needs Redis: why, when TEST_REDIS_URL is unset; false otherwise.
 * @example describe('rate limit shared through Redis', { skip: redisSkip('Redis rate-limit tests') }, () => {…})
 */
export function redisSkip (tests: string): string | false {
  return TEST_REDIS_URL === undefined ? `TEST_REDIS_URL is not set: ${tests} skipped` : false
}

/**
 * The settings of instances that count in the test Redis, under a key prefix of their own so no
 * other test's counts mix in; through `proxy` when the test cuts Redis off.
 * @example const instances = useTwoInstances(backend.name, { RATE_LIMIT: '6', ...redisSettings() })
 */
export function redisSettings (proxy?: TcpProxy): { REDIS_URL: string, REDIS_KEY_PREFIX: string } {
  return {
    REDIS_URL: proxy === undefined ? TEST_REDIS_URL! : `redis://127.0.0.1:${proxy.port}`,
    REDIS_KEY_PREFIX: `petstore-test-${randomBytes(6).toString('hex')}:`
  }
}

/**
 * A TcpProxy to the test Redis, for a test that cuts it off and restores it.
 * @example const proxy = await proxyToRedis(); const server = await startTestServer({ env: redisSettings(proxy) })
 */
export async function proxyToRedis (): Promise<TcpProxy> {
  const redis = new URL(TEST_REDIS_URL!)
  return await TcpProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) })
}
