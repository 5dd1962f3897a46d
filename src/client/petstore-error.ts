import type { ErrorBody } from '../schemas/error.js'

/**
 * Every code a {@link PetstoreError} can carry: the API's catalogue (docs/errors.md),
 * plus `network_error` (no answer reached the client) and `invalid_response`
 * (an answer that is not the API's).
 */
export type PetstoreErrorCode = ErrorBody['code'] | 'network_error' | 'invalid_response'

/**
 * The one error the client throws: the API's `{code, message, status}`, or a
 * network failure (`status` 0) after the retries ran out.
 * @example
 * try { await client.getPet(42) } catch (err) { if (isPetstoreError(err, 'not_found')) return undefined; throw err }
 */
export class PetstoreError extends Error {
  override name = 'PetstoreError'
  readonly code: PetstoreErrorCode
  /** The HTTP status; 0 when no response arrived. */
  readonly status: number

  constructor (code: PetstoreErrorCode, message: string, status: number, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.status = status
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
