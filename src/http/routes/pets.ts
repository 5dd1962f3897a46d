/**
 * The three operations of the spec. Handlers read the validated input, call the
 * catalogue once, and reply; their documentation is src/schemas/operations.ts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { PetCatalogue } from '../../domain/pets.js'
import { createPetSchema, getPetSchema, listPetsSchema } from '../../schemas/operations.js'
import { OPERATION_SCOPES } from '../../schemas/scopes.js'
import { LIMIT_DEFAULT } from '../../schemas/pets.js'
import { baseUrlOf } from '../public-url.js'

export interface PetRoutesOptions {
  catalogue: PetCatalogue
  publicBaseUrl: string | undefined
  deprecatedAt: Date
  sunset: Date
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
    // Its Idempotency-Key is held by a stage of the request path (src/http/pipeline.ts).
    config: { operation: 'createPet', scope: OPERATION_SCOPES.createPet, idempotent: true },
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
