/**
 * The error catalogue: every error the API answers with, by stable code.
 * `docs/errors.md` has one row per code; a test keeps the two in step.
 */
export const ERROR_STATUS = {
  malformed_json: 400,
  validation_failed: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  gone: 410,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  unavailable: 503
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** The spec's Error body. */
export interface ErrorBody {
  code: ErrorCode
  message: string
  status: number
}

/**
 * An error the API answers with; rendered only by the HTTP error handler.
 * @example throw new AppError('not_found', 'no animal with id 42')
 */
export class AppError extends Error {
  readonly code: ErrorCode
  readonly status: number
  /** Response headers that belong to this error (`Allow`, `Retry-After`, ...). */
  readonly headers: Record<string, string>

  constructor (code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.status = ERROR_STATUS[code]
    this.headers = headers
  }

  toBody (): ErrorBody {
    return { code: this.code, message: this.message, status: this.status }
  }
}

/** @example isAppError(err) && err.code === 'not_found' */
export function isAppError (err: unknown): err is AppError {
  return err instanceof AppError
}
