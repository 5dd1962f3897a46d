/**
 * The one place an error becomes an answer: the HTTP layer's own HttpError, and the table that
 * maps the domain's, the store's, the JSON reader's and Fastify's errors to a code of the
 * catalogue (src/schemas/error.ts), a message naming the field at fault, and headers.
 */
import type { FastifyError } from 'fastify'
import { IdempotencyKeyInFlight, IdempotencyKeyReused, InvalidCursor, PetNotFound } from '../domain/errors.js'
import { ERROR_CATALOGUE, type ErrorBody, type ErrorCode } from '../schemas/error.js'
import { MalformedJson } from '../schemas/json-reader.js'
import { MESSAGES } from '../schemas/messages.js'
import { NoIdLeft, StoreUnavailable } from '../store/store-errors.js'

/**
 * An answer with the Error body; rendered by error-handler.ts, or on the socket by node-server.ts.
 * @example throw new HttpError('uri_too_long', 'request target: must be at most 8192 bytes')
 */
export class HttpError extends Error {
  override name = 'HttpError'
  readonly status: number

  /** `headers`: those that belong to this answer (`Allow`, `Retry-After`, `WWW-Authenticate`, ...). */
  constructor (readonly code: ErrorCode, message: string, readonly headers: Record<string, string> = {}) {
    super(message)
    this.status = ERROR_CATALOGUE[code].status
  }

  toBody (): ErrorBody {
    return { code: this.code, message: this.message, status: this.status }
  }
}

// A store that cannot answer may soon; one out of ids needs an operator, and a client that
// honours Retry-After gives up at once.
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1
const NO_ID_LEFT_RETRY_AFTER_SECONDS = 3600

const CURSOR_MESSAGES: Record<InvalidCursor['reason'], string> = {
  altered: 'cursor: must be a cursor from the Link header of the previous page, unchanged',
  'other-status': 'cursor: was made for another status filter; keep the status of the first page'
}

// Fastify's own errors, by their stable codes (never by message text).
const FASTIFY_ERRORS: Record<string, () => HttpError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new HttpError('payload_too_large', MESSAGES.payloadTooLarge),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new HttpError('unsupported_media_type', MESSAGES.notJson),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new HttpError('malformed_json', 'body: is shorter or longer than its Content-Length'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new HttpError('malformed_json', 'body: is empty; send a JSON object')
}

/**
 * The answer to any thrown value; what no row of the table knows is a 500.
 * @example sendError(reply, toHttpError(new PetNotFound(42))) // 404 not_found, 'petId: no animal with id 42'
 */
export function toHttpError (err: unknown): HttpError {
  if (err instanceof HttpError) return err
  if (err instanceof PetNotFound) return new HttpError('not_found', MESSAGES.petNotFound(err.id))
  if (err instanceof InvalidCursor) return new HttpError('validation_failed', CURSOR_MESSAGES[err.reason])
  if (err instanceof IdempotencyKeyInFlight) {
    return new HttpError('idempotency_conflict', MESSAGES.idempotencyConflict)
  }
  if (err instanceof IdempotencyKeyReused) {
    return new HttpError('idempotency_key_reused', MESSAGES.idempotencyKeyReused)
  }
  if (err instanceof MalformedJson) return new HttpError('malformed_json', `body: ${err.message}`)
  if (err instanceof StoreUnavailable) {
    return new HttpError('unavailable', MESSAGES.storeUnavailable, { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) })
  }
  if (err instanceof NoIdLeft) return new HttpError('unavailable', err.message, { 'retry-after': String(NO_ID_LEFT_RETRY_AFTER_SECONDS) })
  const code = (err as FastifyError | undefined)?.code
  const known = code === undefined ? undefined : FASTIFY_ERRORS[code]
  if (known !== undefined) return known()
  return new HttpError('internal_error', MESSAGES.internalError)
}
