/**
 * The three operations of the spec. Handlers read the validated input, call the
 * catalogue once, and reply; their documentation is src/schemas/operations.ts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { PetCatalogue } from '../../domain/pets.js'
import { HttpError } from '../errors.js'
import { IDEMPOTENCY_KEY_MAX, createPetSchema, getPetSchema, listPetsSchema } from '../../schemas/operations.js'
import { OPERATION_SCOPES } from '../../schemas/scopes.js'
import { LIMIT_DEFAULT } from '../../schemas/pets.js'
import { baseUrlOf } from '../public-url.js'

export interface PetRoutesOptions {
  catalogue: PetCatalogue
  publicBaseUrl: string | undefined
  deprecatedAt: Date
  sunset: Date
}

function idempotencyKeyOf (header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  const values = Array.isArray(header) ? header : [header]
  // The draft sends the key as a quoted structured-field string; a bare token is taken as it is.
  const key = values.length === 1 ? values[0]!.replace(/^"(.*)"$/, '$1') : ''
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX) {
    throw new HttpError('validation_failed', `Idempotency-Key: must be sent once, 1 to ${IDEMPOTENCY_KEY_MAX} characters`)
  }
  return key
}

/** Handlers read the validated input, call the catalogue once, and return the body, serialized by the response schema. */
export function registerPetRoutes (fastify: FastifyInstance, options: PetRoutesOptions): void {
  const { catalogue, publicBaseUrl } = options
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  // No HEAD on the API's paths: it is 405 there, like every other method (docs/decisions.md).
  app.get('/v1/pets', {
    exposeHeadRoute: false,
    config: { operation: 'listPets', scope: OPERATION_SCOPES.listPets },
    schema: listPetsSchema
  }, async (request, reply) => {
    const { status, cursor } = request.query
    const limit = Number(request.query.limit ?? LIMIT_DEFAULT)
    const page = await catalogue.listPets({ limit, status, cursor })
    if (page.next !== undefined) {
      // Nothing to escape: the limit is digits, the status one of the enum's words, the cursor base64url and a dot.
      const statusPart = status === undefined ? '' : `&status=${status}`
      reply.header('link', `<${baseUrlOf(request, publicBaseUrl)}/pets?limit=${limit}${statusPart}&cursor=${page.next}>; rel="next"`)
    }
    return page.pets
  })

  app.post('/v1/pets', {
    config: { operation: 'createPet', scope: OPERATION_SCOPES.createPet },
    // The key is held from the moment the headers arrive until the answer is sent, so a
    // retry while the first request is still uploading its body or committing gets 409.
    onRequest: async (request, reply) => {
      const key = idempotencyKeyOf(request.raw.headersDistinct['idempotency-key'])
      if (key === undefined || request.state.caller === undefined) return
      const release = catalogue.holdIdempotencyKey(request.state.caller, key)
      request.state.idempotency = { key, release }
      reply.raw.once('close', release) // the client went away, or the response is done
    },
    onSend: async (request) => { request.state.idempotency?.release() },
    schema: createPetSchema
  }, async (request, reply) => {
    const { pet, replayed } = await catalogue.createPet(request.body, request.state.caller!, request.state.idempotency?.key)
    if (replayed) reply.header('idempotent-replayed', 'true')
    reply.header('location', `${baseUrlOf(request, publicBaseUrl)}/pets/${pet.id}`)
    reply.code(201)
    return pet
  })

  app.get('/v1/pets/:petId', {
    exposeHeadRoute: false,
    config: { operation: 'getPet', scope: OPERATION_SCOPES.getPet, deprecatedAt: options.deprecatedAt },
    schema: getPetSchema(options.sunset)
  }, async (request) => await catalogue.getPet(request.params.petId))
}
