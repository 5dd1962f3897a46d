import { Type, type Static } from '@sinclair/typebox'
import { StringEnum } from './kinds.js'

/**
 * The error catalogue clients program against: every `code` the API answers with, the status it
 * comes with and what it means. The OpenAPI document's description lists it, and
 * `docs/errors.md` has one row per code; a test keeps the two in step.
 * Only src/http turns an error into one of these.
 */
export const ERROR_CATALOGUE = {
  malformed_json: { status: 400, meaning: 'The body is not one well-formed JSON object: empty, unparseable, with a key repeated with another value, or nested too deeply.' },
  validation_failed: { status: 400, meaning: 'A field, query or path parameter breaks its rule, or is unknown; or the cursor or `Idempotency-Key` is not valid. `message` names the field and the rule.' },
  unauthorized: { status: 401, meaning: 'The API key is missing, malformed, unknown, expired, rotated out or revoked; `message` says which.' },
  insufficient_scope: { status: 403, meaning: 'The API key lacks the scope of the operation (`pets:read` or `pets:write`); `WWW-Authenticate` names it.' },
  not_found: { status: 404, meaning: 'No animal has this id, or there is no such route.' },
  method_not_allowed: { status: 405, meaning: 'The path does not take this method; `Allow` lists those it takes.' },
  request_timeout: { status: 408, meaning: 'The headers, or the whole request, took longer than their time limit.' },
  idempotency_conflict: { status: 409, meaning: 'A request with the same `Idempotency-Key` is still in flight; retry once it completes.' },
  gone: { status: 410, meaning: '`getPet` was called after its sunset; use `GET /v1/pets`.' },
  payload_too_large: { status: 413, meaning: 'The body is over its size limit.' },
  uri_too_long: { status: 414, meaning: 'The request target is over its size limit.' },
  unsupported_media_type: { status: 415, meaning: 'The body is not uncompressed UTF-8 JSON sent as `application/json`.' },
  idempotency_key_reused: { status: 422, meaning: 'The same `Idempotency-Key` came with a different body.' },
  rate_limited: { status: 429, meaning: 'The rate limit of the key, or the limit of failed authentications from the client\'s address, was reached; wait `Retry-After` seconds.' },
  headers_too_large: { status: 431, meaning: 'The request headers are over their size or count limit.' },
  internal_error: { status: 500, meaning: 'A fault of the service, logged with the request id; report the `X-Request-Id` of the answer.' },
  unavailable: { status: 503, meaning: 'The database cannot be reached, the service is shutting down, or no id is left for a new animal; retry after `Retry-After` seconds.' }
} as const satisfies Record<string, { status: number, meaning: string }>

export type ErrorCode = keyof typeof ERROR_CATALOGUE

/** The spec's Error body; `code` is one of the catalogue above. */
export const ErrorBody = Type.Object({
  code: StringEnum(Object.keys(ERROR_CATALOGUE) as ErrorCode[], { description: 'Machine-readable error code (docs/errors.md).' }),
  message: Type.String({ description: 'Human-readable description: the offending field and the rule it breaks.' }),
  status: Type.Integer({ description: 'The HTTP status code of the response.' })
}, { $id: 'Error', additionalProperties: false, description: 'The body of every error answer: a code of the catalogue, a message naming the field and its rule, the HTTP status.', examples: [{ code: 'validation_failed', message: 'limit: must be an integer from 1 to 100', status: 400 }] })
export type ErrorBody = Static<typeof ErrorBody>

/** The catalogue as Markdown, one item per code with its status and meaning: the OpenAPI document's description carries it. */
export function errorCatalogueMarkdown (): string {
  return Object.entries(ERROR_CATALOGUE).map(([code, { status, meaning }]) => `- \`${code}\` (${status}): ${meaning}`).join('\n')
}
