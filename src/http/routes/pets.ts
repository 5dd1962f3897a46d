/**
 * The three operations of the spec. Handlers read the validated input, call the
 * catalogue once, and reply.
 */
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { PetCatalogue } from '../../domain/pets.js'
import { AppError } from '../../domain/errors.js'
import { ErrorBody } from '../../schemas/error.js'
import type { Int64 } from '../../schemas/kinds.js'
import { LIMIT_DEFAULT, ListPetsQuery, NewPet, Pet, PetParams, Pets, type PetStatus } from '../../schemas/pets.js'
import { baseUrlOf } from '../public-url.js'

export interface PetRoutesOptions {
  catalogue: PetCatalogue
  publicBaseUrl: string | undefined
  deprecatedAt: Date
  sunset: Date
}

const IDEMPOTENCY_KEY_MAX = 255

declare module 'fastify' {
  interface FastifyRequest {
    /** The Idempotency-Key of a createPet request, once held. */
    idempotencyKey?: string
    /** Frees the held Idempotency-Key; called when the answer is sent. */
    releaseIdempotencyKey?: () => void
  }
}

/** Error responses documented for every operation, with what each one means there. */
function errors (described: Record<number, string>) {
  const responses: Record<number, unknown> = {}
  for (const [status, description] of Object.entries(described)) {
    responses[Number(status)] = { ...ErrorBody, description }
  }
  return responses
}

const COMMON_ERRORS = {
  401: 'API key missing or invalid (`unauthorized`); `WWW-Authenticate` says which.',
  429: 'Per-key rate limit hit (`rate_limited`); retry after `Retry-After` seconds.',
  503: 'The database is unavailable or the service is shutting down (`unavailable`); retry after `Retry-After` seconds.'
}

const rateLimitHeaders = {
  RateLimit: Type.String({ description: 'Remaining quota (IETF httpapi RateLimit header draft), e.g. `"default";r=5999;t=60`.' }),
  'RateLimit-Policy': Type.String({ description: 'The quota policy, e.g. `"default";q=6000;w=60`.' })
}

const deprecationHeaders = {
  Deprecation: Type.String({ description: 'RFC 9745: when the operation was deprecated, as `@<unix seconds>`.' }),
  Sunset: Type.String({ description: 'RFC 8594: when the operation will be removed (an HTTP date).' }),
  Link: Type.String({ description: '`rel="deprecation"` (the docs) and `rel="successor-version"` (`GET /v1/pets`).' })
}

function idempotencyKeyOf (header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  const values = Array.isArray(header) ? header : [header]
  // The draft sends the key as a quoted structured-field string; a bare token is taken as it is.
  const key = values.length === 1 ? values[0]!.replace(/^"(.*)"$/, '$1') : ''
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX) {
    throw new AppError('validation_failed', `Idempotency-Key: must be sent once, 1 to ${IDEMPOTENCY_KEY_MAX} characters`)
  }
  return key
}

export function registerPetRoutes (app: FastifyInstance, options: PetRoutesOptions): void {
  const { catalogue, publicBaseUrl } = options
  app.decorateRequest('idempotencyKey', undefined)
  app.decorateRequest('releaseIdempotencyKey', undefined)

  app.get<{ Querystring: { limit?: Int64, status?: PetStatus, cursor?: string } }>('/v1/pets', {
    config: { operation: 'listPets' },
    schema: {
      operationId: 'listPets',
      summary: 'List animals',
      description: 'A page of animals in ascending id order. When more animals match, `Link: <…>; rel="next"` gives the next page; the body stays a plain array.',
      tags: ['pets'],
      querystring: ListPetsQuery,
      response: {
        200: {
          ...Pets,
          description: 'A page of animals.',
          headers: { Link: Type.String({ description: 'RFC 8288 `rel="next"`: the URL of the next page, when there is one.' }), ...rateLimitHeaders }
        },
        ...errors({ 400: '`limit`, `status` or `cursor` breaks its rule (`validation_failed`).', ...COMMON_ERRORS })
      }
    }
  }, async (request, reply) => {
    const { status, cursor } = request.query
    const limit = Number(request.query.limit ?? LIMIT_DEFAULT)
    const page = await catalogue.listPets({ limit, status, cursor })
    if (page.next !== undefined) {
      const next = new URLSearchParams({ limit: String(limit), ...(status === undefined ? {} : { status }), cursor: page.next })
      reply.header('link', `<${baseUrlOf(request, publicBaseUrl)}/pets?${next}>; rel="next"`)
    }
    return page.pets
  })

  app.post<{ Body: NewPet }>('/v1/pets', {
    config: { operation: 'createPet' },
    // The key is held from the moment the headers arrive until the answer is sent, so a
    // retry while the first request is still uploading its body or committing gets 409.
    onRequest: async (request, reply) => {
      const idempotencyKey = idempotencyKeyOf(request.raw.headersDistinct['idempotency-key'])
      if (idempotencyKey === undefined || request.caller === undefined) return
      const release = catalogue.holdIdempotencyKey(request.caller, idempotencyKey)
      request.idempotencyKey = idempotencyKey
      reply.raw.once('close', release) // the client went away, or the response is done
      request.releaseIdempotencyKey = release
    },
    onSend: async (request) => { request.releaseIdempotencyKey?.() },
    schema: {
      operationId: 'createPet',
      summary: 'Add an animal',
      description: 'Adds an animal; `id` is assigned by the service. The 201 is sent once the animal is durably stored. ' +
        'With `Idempotency-Key`, a repeat of the same request within 24 h replays the first response instead of adding a second animal.',
      tags: ['pets'],
      headers: Type.Object({
        'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX, description: 'Makes a retried create safe: 1 to 255 characters, unique per animal.' }))
      }),
      body: NewPet,
      response: {
        201: {
          ...Pet,
          description: 'The animal, with its assigned id.',
          headers: {
            Location: Type.String({ description: 'The URL of the new animal.' }),
            'Idempotent-Replayed': Type.String({ description: '`true` when this response replays an earlier request with the same Idempotency-Key.' }),
            ...rateLimitHeaders
          }
        },
        ...errors({
          400: 'The body is not valid JSON (`malformed_json`), or a field is missing or breaks its rule (`validation_failed`).',
          ...COMMON_ERRORS,
          409: 'A request with the same Idempotency-Key is still in progress (`idempotency_conflict`).',
          413: 'The body is over 16 KiB (`payload_too_large`).',
          415: 'The body is not `application/json` (`unsupported_media_type`).',
          422: 'The Idempotency-Key was used with a different body (`idempotency_key_reused`).'
        })
      }
    }
  }, async (request, reply) => {
    const { pet, replayed } = await catalogue.createPet(request.body, request.caller!, request.idempotencyKey)
    if (replayed) reply.header('idempotent-replayed', 'true')
    reply.header('location', `${baseUrlOf(request, publicBaseUrl)}/pets/${pet.id}`)
    return reply.code(201).send(pet)
  })

  app.get<{ Params: { petId: Int64 } }>('/v1/pets/:petId', {
    config: { operation: 'getPet', deprecatedAt: options.deprecatedAt },
    schema: {
      operationId: 'getPet',
      summary: 'Get an animal (deprecated)',
      description: `Deprecated: removed on ${options.sunset.toISOString().slice(0, 10)}; use \`GET /v1/pets\` with the \`status\` filter. ` +
        'Every response carries `Deprecation`, `Sunset` and `Link` headers; from the sunset on, the operation answers 410.',
      tags: ['pets'],
      deprecated: true,
      params: PetParams,
      response: {
        200: { ...Pet, description: 'The animal.', headers: { ...deprecationHeaders, ...rateLimitHeaders } },
        ...errors({
          400: '`petId` is not a decimal integer from 1 to 9223372036854775807 (`validation_failed`).',
          ...COMMON_ERRORS,
          404: 'No animal has this id (`not_found`).',
          410: 'The sunset has passed: the operation is removed (`gone`).'
        })
      }
    }
  }, async (request) => catalogue.getPet(request.params.petId))

  // Known paths, other methods: 405 with Allow (after auth, like every route under /v1).
  for (const [url, allow] of [['/v1/pets', 'GET, POST'], ['/v1/pets/:petId', 'GET']] as const) {
    app.route({
      method: ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', ...(allow.includes('POST') ? [] : ['POST'])],
      url,
      schema: { hide: true },
      config: { operation: 'methodNotAllowed' },
      handler: async (request) => {
        throw new AppError('method_not_allowed', `${request.method}: is not allowed on ${request.routeOptions.url}; use ${allow}`, { allow })
      }
    })
  }
}
