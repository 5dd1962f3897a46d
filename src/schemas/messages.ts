/**
 * The messages of error answers written in more than one place: the stage that answers
 * (src/http) and the OpenAPI document's examples (operations.ts) call the same function, so an
 * example cannot drift from the answer (test/http/error-answers.test.ts compares the two).
 * Each names the field at fault and its rule.
 */
import type { Int64 } from './int64.js'
import { BODY_LIMIT_BYTES, HEADER_LIMIT_BYTES, URL_LIMIT_BYTES, type RequestTimeouts } from './limits.js'

export const MESSAGES = {
  unknownKey: 'Authorization: the API key is unknown or revoked',
  storeUnavailable: 'the database is unavailable; retry later',
  internalError: 'the server failed to answer; the request id identifies it in the logs',
  uriTooLong: `request target: must be at most ${URL_LIMIT_BYTES} bytes`,
  headersTooLarge: `headers: must be at most ${HEADER_LIMIT_BYTES} bytes in all`,
  payloadTooLarge: `body: must be at most ${BODY_LIMIT_BYTES} bytes`,
  notJson: 'Content-Type: must be application/json',
  idempotencyConflict: 'Idempotency-Key: a request with this key is still in progress; retry after it completes',
  idempotencyKeyReused: 'Idempotency-Key: was used with a different body; use a new key for a new animal',

  /** @example MESSAGES.overloaded(1) */
  overloaded: (retryInSeconds: number) => `the service is at capacity; retry in ${retryInSeconds} s`,
  /** @example MESSAGES.rateLimited(6000, 60) */
  rateLimited: (quota: number, retryInSeconds: number) => `rate limit: at most ${quota} requests a minute per API key; retry in ${retryInSeconds} s`,
  /** @example MESSAGES.insufficientScope('pets:write', 'createPet') */
  insufficientScope: (scope: string, operation: string) => `Authorization: this API key lacks ${scope}, which ${operation} needs`,
  /** @example MESSAGES.methodNotAllowed('DELETE', '/v1/pets', 'GET, POST') */
  methodNotAllowed: (method: string, path: string, allow: string) => `${method}: is not allowed on ${path}; use ${allow}`,
  /** @example MESSAGES.requestTimeout(REQUEST_TIMEOUTS) */
  requestTimeout: ({ headersMs, requestMs }: RequestTimeouts) => `request: headers must arrive within ${headersMs / 1000} s and the whole request within ${requestMs / 1000} s`,
  /** @example MESSAGES.petNotFound(42) */
  petNotFound: (id: Int64) => `petId: no animal with id ${id}`,
  /** @example MESSAGES.gone('GET', '/v1/pets/:petId', sunset) */
  gone: (method: string, path: string, sunset: Date) => `${method} ${path}: was removed on ${sunset.toISOString()}; use GET /v1/pets with the status filter`
} as const
