/**
 * The OpenAPI documentation of the three operations: their input and response
 * schemas, and the prose of each. Fastify validates and serializes with these
 * very schemas, and @fastify/swagger publishes them.
 */
import { Type, type TSchema } from '@sinclair/typebox'
import { describeBrokenRule, type Part } from './broken-rule.js'
import { compileSchema } from './components.js'
import { ERROR_CATALOGUE, ErrorBody, type ErrorCode } from './error.js'
import { BODY_LIMIT_BYTES, HEADER_LIMIT_BYTES, RATE_LIMIT_DEFAULT, RATE_LIMIT_WINDOW_MS, REQUEST_TIMEOUTS, URL_LIMIT_BYTES } from './limits.js'
import { MESSAGES } from './messages.js'
import { ListPetsQuery, NewPet, Pet, PetParams, Pets } from './pets.js'
import { refTo } from './ref.js'
import { OPERATION_SCOPES, securityOf } from './scopes.js'

declare module 'fastify' {
  interface FastifySchema {
    /** When a deprecated operation is removed (published in the OpenAPI document). */
    'x-sunset'?: string
  }
}

/** The longest Idempotency-Key, without the quotes of its structured-field form. */
export const IDEMPOTENCY_KEY_MAX = 255

/** An error response as documented, under its code: when it happens, and an example message. */
interface ErrorDoc { when: string, example: string }
type ErrorDocs = Partial<Record<ErrorCode, ErrorDoc>>

/** A JSON body of a response: its schema by reference to its component, and the example of this response. */
function json<T extends TSchema> (schema: T, example?: unknown) {
  return { 'application/json': { schema: refTo(schema), ...(example === undefined ? {} : { example }) } }
}

/** Error responses of an operation, under the status of each code, with its example body and the headers it carries. */
function errors (described: ErrorDocs, headers: Record<string, TSchema> = {}) {
  const responses: Record<number, unknown> = {}
  for (const [code, { when, example }] of Object.entries(described) as Array<[ErrorCode, ErrorDoc]>) {
    const { status } = ERROR_CATALOGUE[code]
    responses[status] = {
      description: when,
      headers: { ...headers, ...ERROR_HEADERS[status] },
      content: json(ErrorBody, { code, message: example, status })
    }
  }
  return responses
}

const kib = (bytes: number): string => `${bytes / 1024} KiB`

const retryAfter = { 'Retry-After': Type.String({ description: 'Seconds to wait before trying again.' }) }

/** Headers that come with an error status whatever the operation. */
const ERROR_HEADERS: Record<number, Record<string, TSchema>> = {
  401: { 'WWW-Authenticate': Type.String({ description: 'RFC 6750 challenge: `Bearer realm="petstore"`, with `error="invalid_token"` for a wrong, expired or rotated-out key.' }) },
  403: { 'WWW-Authenticate': Type.String({ description: 'RFC 6750 §3.1: `Bearer realm="petstore", error="insufficient_scope", scope="<the scope>"`.' }) },
  405: { Allow: Type.String({ description: 'The methods of the path: `GET, POST` on `/pets`, `GET` on `/pets/{petId}`.' }) },
  429: retryAfter,
  503: retryAfter
}

const COMMON_ERRORS = {
  unauthorized: { when: 'API key missing, invalid, expired, rotated out or revoked (`unauthorized`); the message and `WWW-Authenticate` say which.', example: MESSAGES.unknownKey },
  rate_limited: { when: 'Per-key rate limit hit (`rate_limited`); retry after `Retry-After` seconds.', example: MESSAGES.rateLimited(RATE_LIMIT_DEFAULT, RATE_LIMIT_WINDOW_MS / 1000) },
  unavailable: { when: 'The database is unavailable, the service is at capacity (requests behind a key are refused at once while they would wait too long), or it is shutting down (`unavailable`); retry after `Retry-After` seconds.', example: MESSAGES.storeUnavailable },
  uri_too_long: { when: `The request target is over ${kib(URL_LIMIT_BYTES)} (\`uri_too_long\`).`, example: MESSAGES.uriTooLong },
  headers_too_large: { when: `The request headers are over ${kib(HEADER_LIMIT_BYTES)} or 500 fields (\`headers_too_large\`).`, example: MESSAGES.headersTooLarge },
  internal_error: { when: 'A bug (`internal_error`), logged with the request id; report the `X-Request-Id`.', example: MESSAGES.internalError }
}

/** The 403 of a key without the operation's scope. */
function scopeError (operation: keyof typeof OPERATION_SCOPES): ErrorDoc {
  const scope = OPERATION_SCOPES[operation]
  return { when: `The API key lacks \`${scope}\` (\`insufficient_scope\`); use a key with it.`, example: MESSAGES.insufficientScope(scope, operation) }
}

/** Answered before the operation runs: another method (`method`, say) on its path, or a client too slow to send its request. */
function outsideErrors (method: string, path: string, allow: string): ErrorDocs {
  const { headersMs, requestMs } = REQUEST_TIMEOUTS
  return {
    method_not_allowed: { when: 'Another method on this path (`method_not_allowed`); `Allow` lists the methods.', example: MESSAGES.methodNotAllowed(method, path, allow) },
    request_timeout: {
      when: `The headers took over ${headersMs / 1000} s, or the whole request over ${requestMs / 1000} s (\`request_timeout\`).`,
      example: MESSAGES.requestTimeout(REQUEST_TIMEOUTS)
    }
  }
}

/** The 400 a value breaks its rule with, as validation words it. @example brokenRule(ListPetsQuery, { limit: '0' }, 'querystring') */
function brokenRule (schema: TSchema, sample: unknown, part: Part): string {
  const check = compileSchema(schema)
  if (check.Check(sample)) throw new Error(`the example of ${part} breaks no rule`)
  return describeBrokenRule(check, sample, part)
}

const rateLimitHeaders = {
  RateLimit: Type.String({ description: `Remaining quota (IETF httpapi RateLimit header draft), e.g. \`"default";r=${RATE_LIMIT_DEFAULT - 1};t=${RATE_LIMIT_WINDOW_MS / 1000}\`.` }),
  'RateLimit-Policy': Type.String({ description: `The quota policy, e.g. \`"default";q=${RATE_LIMIT_DEFAULT};w=${RATE_LIMIT_WINDOW_MS / 1000}\`.` })
}

const deprecationHeaders = {
  Deprecation: Type.String({ description: 'RFC 9745: when the operation was deprecated, as `@<unix seconds>`.' }),
  Sunset: Type.String({ description: 'RFC 8594: when the operation will be removed (an HTTP date).' }),
  Link: Type.String({ description: '`rel="deprecation"` (the docs) and `rel="successor-version"` (`GET /v1/pets`).' })
}

export const listPetsSchema = {
  operationId: 'listPets',
  summary: 'List animals',
  description: 'A page of animals in ascending id order. When more animals match, `Link: <…>; rel="next"` gives the next page; the body stays a plain array.',
  tags: ['pets'],
  security: securityOf('listPets'),
  querystring: ListPetsQuery,
  response: {
    200: {
      description: 'A page of animals.',
      headers: { Link: Type.String({ description: 'RFC 8288 `rel="next"`: the URL of the next page, when there is one.' }), ...rateLimitHeaders },
      content: json(Pets)
    },
    ...errors({
      validation_failed: { when: '`limit`, `status` or `cursor` breaks its rule (`validation_failed`).', example: brokenRule(ListPetsQuery, { limit: '0' }, 'querystring') },
      ...COMMON_ERRORS,
      insufficient_scope: scopeError('listPets'),
      ...outsideErrors('DELETE', '/v1/pets', 'GET, POST')
    })
  }
}

export const createPetSchema = {
  operationId: 'createPet',
  summary: 'Add an animal',
  description: 'Adds an animal; `id` is assigned by the service. The 201 is sent once the animal is durably stored. ' +
    'With `Idempotency-Key`, a repeat of the same request within 24 h replays the first response instead of adding a second animal.',
  tags: ['pets'],
  security: securityOf('createPet'),
  // The key's length is checked by its hold alone (src/http/stages/idempotency-hold.ts), on the key without the quotes of its
  // structured-field form: a length here would count the quotes of a quoted key of 255.
  headers: Type.Object({
    'idempotency-key': Type.Optional(Type.String({ description: `Makes a retried create safe: 1 to ${IDEMPOTENCY_KEY_MAX} characters (without the quotes when sent quoted), unique per animal.` }))
  }),
  body: refTo(NewPet),
  response: {
    201: {
      description: 'The animal, with its assigned id.',
      headers: {
        Location: Type.String({ description: 'The URL of the new animal.' }),
        'Idempotent-Replayed': Type.String({ description: '`true` when this response replays an earlier request with the same Idempotency-Key.' }),
        ...rateLimitHeaders
      },
      content: json(Pet)
    },
    ...errors({
      validation_failed: { when: 'The body is not valid JSON (`malformed_json`), or a field is missing or breaks its rule (`validation_failed`).', example: brokenRule(NewPet, { name: 'Rex' }, 'body') },
      ...COMMON_ERRORS,
      insufficient_scope: scopeError('createPet'),
      unavailable: { ...COMMON_ERRORS.unavailable, when: `${COMMON_ERRORS.unavailable.when} Also when no id is left for a new animal (an import took 9223372036854775807), then with \`Retry-After: 3600\`: retrying soon does not help.` },
      ...outsideErrors('DELETE', '/v1/pets', 'GET, POST'),
      idempotency_conflict: { when: 'A request with the same Idempotency-Key is still in progress (`idempotency_conflict`).', example: MESSAGES.idempotencyConflict },
      payload_too_large: { when: `The body is over ${kib(BODY_LIMIT_BYTES)} (\`payload_too_large\`).`, example: MESSAGES.payloadTooLarge },
      unsupported_media_type: { when: 'The body is not `application/json`, has a charset other than utf-8, or a `Content-Encoding` other than `identity` (`unsupported_media_type`).', example: MESSAGES.notJson },
      idempotency_key_reused: { when: 'The Idempotency-Key was used with a different body (`idempotency_key_reused`).', example: MESSAGES.idempotencyKeyReused }
    })
  }
}

/** getPet's documentation, which names the day of its removal. */
export function getPetSchema (sunset: Date) {
  return {
    operationId: 'getPet',
    summary: 'Get an animal (deprecated)',
    description: `Deprecated: removed on ${sunset.toISOString().slice(0, 10)}; use \`GET /v1/pets\` with the \`status\` filter. ` +
      'Every response carries `Deprecation`, `Sunset` and `Link` headers; from the sunset on, the operation answers 410.',
    tags: ['pets'],
    deprecated: true,
    security: securityOf('getPet'),
    'x-sunset': sunset.toISOString(),
    params: PetParams,
    response: {
      200: { description: 'The animal.', headers: { ...deprecationHeaders, ...rateLimitHeaders }, content: json(Pet) },
      // Every response of getPet carries the deprecation headers, errors included (not those answered outside it).
      ...errors({
        validation_failed: { when: '`petId` is not a decimal integer from 1 to 9223372036854775807 (`validation_failed`).', example: brokenRule(PetParams, { petId: 'abc' }, 'params') },
        ...COMMON_ERRORS,
        insufficient_scope: scopeError('getPet'),
        not_found: { when: 'No animal has this id (`not_found`).', example: MESSAGES.petNotFound(42) },
        gone: { when: 'The sunset has passed: the operation is removed (`gone`).', example: MESSAGES.gone('GET', '/v1/pets/:petId', sunset) }
      }, deprecationHeaders),
      ...errors(outsideErrors('PUT', '/v1/pets/:petId', 'GET'))
    }
  }
}
