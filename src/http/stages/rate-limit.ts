/**
 * Per-API-key rate limit: RATE_LIMIT (or the key's own limit) requests in a 60 s window per
 * key name, counted by the window counter the throttle of forged keys uses (in this process or, with REDIS_URL,
 * in Redis and shared by every instance). Headers of the IETF httpapi RateLimit draft on
 * every authenticated response; 429 with Retry-After past the quota.
 * Not @fastify/rate-limit: counting with the window counter the throttle keeps anyway gave
 * get 1.10× the req/s and 0.90× the CPU a request in `npm run bench -- --baseline` (docs/decisions.md).
 */
import type { onRequestAsyncHookHandler } from 'fastify'
import { RATE_LIMIT_WINDOW_MS } from '../../schemas/limits.js'
import { MESSAGES } from '../../schemas/messages.js'
import { HttpError } from '../errors.js'
import type { WindowCounts } from '../window-counts.js'

/**
 * Counts the caller's request. A key's own limit (`keys create --rate-limit`) replaces `limit`
 * (RATE_LIMIT), even 0; counted by the key's name, so a rotation's two keys share one quota.
 * @example app.addHook('onRequest', perKeyRateLimit(6000, counts))
 */
export function perKeyRateLimit (limit: number, counts: WindowCounts): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const caller = request.state.caller
    if (caller === undefined) return
    const quota = caller.rateLimit ?? limit
    if (quota === 0) return
    const window = await counts.add(caller.keyName, request.log)
    const reset = Math.max(1, Math.ceil(window.resetInMs / 1000))
    reply.headers({
      'ratelimit-policy': `"default";q=${quota};w=${RATE_LIMIT_WINDOW_MS / 1000}`,
      ratelimit: `"default";r=${Math.max(0, quota - window.count)};t=${reset}`
    })
    if (window.count > quota) {
      throw new HttpError('rate_limited', MESSAGES.rateLimited(quota, reset),
        { 'retry-after': String(reset) })
    }
  }
}
