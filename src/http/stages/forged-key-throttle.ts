/**
 * The throttle of forged keys: failed authentications are counted per client address
 * (`request.ip`: the peer, or with TRUST_PROXY the nearest X-Forwarded-For address that
 * is no trusted proxy), and past FAILED_AUTH_LIMIT in a window that address gets 429 for
 * any key not already known to be valid, before the store is asked.
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { ApiKeyVerifier } from '../../domain/api-keys/verifier.js'
import { HttpError } from '../errors.js'
import { FAILED_AUTH_LIMIT, clientGroupOf } from '../../domain/failed-authentications.js'
import type { WindowCounts } from '../window-counts.js'

export interface ForgedKeyThrottle {
  /** The onRequest hook: 429 for an address past the limit. */
  check: onRequestAsyncHookHandler
  /** Called by auth for each unknown or revoked key. */
  noteFailure: (request: FastifyRequest) => Promise<void>
}

export interface ForgedKeyThrottleOptions {
  verifier: ApiKeyVerifier
  /** Failed authentications by client group, FAILED_AUTH_WINDOW_MS long. */
  counts: WindowCounts
  /** Called for each request answered 429 by the throttle (the metric). */
  onThrottled: () => void
}

/**
 * @example const throttle = forgedKeyThrottle({ verifier, counts, onThrottled: () => metrics.authThrottled.inc() })
 */
export function forgedKeyThrottle ({ verifier, counts, onThrottled }: ForgedKeyThrottleOptions): ForgedKeyThrottle {
  return {
    check: async (request) => {
      const presented = request.state.presented
      // No key was answered 401 before; a key in use is never slowed by its neighbours' failures.
      if (presented === undefined || verifier.isKnownValid(presented)) return
      const window = await counts.read(clientGroupOf(request.ip), request.log)
      if (window.count < FAILED_AUTH_LIMIT) return
      onThrottled()
      const retryAfter = Math.max(1, Math.ceil(window.resetInMs / 1000))
      throw new HttpError('rate_limited',
        `Authorization: at most ${FAILED_AUTH_LIMIT} failed authentications a minute from one address; retry in ${retryAfter} s`,
        { 'retry-after': String(retryAfter) })
    },
    noteFailure: async (request) => {
      await counts.add(clientGroupOf(request.ip), request.log)
    }
  }
}
