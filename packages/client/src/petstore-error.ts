import type { components } from './generated/openapi.js'

/**
 * Every code a {@link PetstoreError} can carry: the API's catalogue (docs/errors.md),
 * plus `network_error` (no answer reached the client), `invalid_response` (an answer that is
 * not the API's) and `throttled` (not sent: the service refused most of the client's recent tries).
 */
export type PetstoreErrorCode = components['schemas']['Error']['code'] | 'network_error' | 'invalid_response' | 'throttled'

export interface PetstoreErrorOptions {
  cause?: unknown
  retryAfterSeconds?: number | undefined
  requestId?: string | undefined
}

/**
 * The one error the client throws: the API's `{code, message, status}` with the answer's
 * `Retry-After` and `X-Request-Id`, or a network failure (`status` 0) after the retries ran out.
 * @example
 * try { await client.getPet(42) } catch (err) { if (isPetstoreError(err, 'not_found')) return undefined; throw err }
 * @example
 * catch (err) { if (isPetstoreError(err, 'internal_error')) console.error(`report request ${err.requestId}`) }
 */
export class PetstoreError extends Error {
  override name = 'PetstoreError'
  readonly code: PetstoreErrorCode
  /** The HTTP status; 0 when no response arrived (`network_error`, `throttled`). */
  readonly status: number
  /**
   * The answer's `Retry-After`, in whole seconds (an HTTP date is counted from now): how long to
   * wait on `rate_limited` and `unavailable`. Undefined when the answer had none.
   */
  readonly retryAfterSeconds: number | undefined
  /** The answer's `X-Request-Id`: quote it when you report an `internal_error`. Undefined without one, and on `network_error` and `throttled`. */
  readonly requestId: string | undefined

  constructor (code: PetstoreErrorCode, message: string, status: number, options: PetstoreErrorOptions = {}) {
    super(message, { cause: options.cause })
    this.code = code
    this.status = status
    this.retryAfterSeconds = options.retryAfterSeconds
    this.requestId = options.requestId
  }

  /** @example if (err.is('rate_limited')) … */
  is<C extends PetstoreErrorCode> (code: C): this is PetstoreError & { code: C } {
    return this.code === code
  }
}

/**
 * Narrows an unknown error to a PetstoreError, optionally of one code.
 * @example if (isPetstoreError(err, 'validation_failed')) console.error(err.message)
 */
export function isPetstoreError<C extends PetstoreErrorCode = PetstoreErrorCode> (err: unknown, code?: C): err is PetstoreError & { code: C } {
  return err instanceof PetstoreError && (code === undefined || err.code === code)
}
