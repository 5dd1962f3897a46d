import { Type, type Static } from '@sinclair/typebox'
import { StringEnum } from './kinds.js'

/**
 * The error catalogue clients program against: every `code` the API answers with, and the
 * status it comes with. `docs/errors.md` has one row per code; a test keeps the two in step.
 * Only src/http turns an error into one of these.
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

/** The spec's Error body; `code` is one of the catalogue above. */
export const ErrorBody = Type.Object({
  code: StringEnum(Object.keys(ERROR_STATUS) as ErrorCode[], { description: 'Machine-readable error code (docs/errors.md).' }),
  message: Type.String({ description: 'Human-readable description: the offending field and the rule it breaks.' }),
  status: Type.Integer({ description: 'The HTTP status code of the response.' })
}, { $id: 'Error', additionalProperties: false, description: 'The body of every error answer: a code of the catalogue, a message naming the field and its rule, the HTTP status.', examples: [{ code: 'validation_failed', message: 'limit: must be an integer from 1 to 100', status: 400 }] })
export type ErrorBody = Static<typeof ErrorBody>
