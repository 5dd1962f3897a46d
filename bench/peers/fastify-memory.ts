/**
 * Peer: Fastify 5 with the service's own TypeBox schemas (src/schemas), answering from
 * memory, no auth. Requests are validated as the service validates them (its compiler over
 * the same schemas: their kinds, such as exact int64 and names in code points, need the
 * TypeBox compiler) and answers are serialized from the same response schemas. No plugin,
 * no store, no log; the body parser is Fastify's own (JSON.parse), not the service's exact one.
 *
 * Run as a process of its own: PORT and BENCH_ANIMALS in the environment; it answers
 * GET /readyz once it listens.
 */
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { generateAnimals, type Animal } from '../animals.js'
import { isMain } from '../ceiling.js'
import { HttpError as AppError } from '../../src/http/errors.js'
import { compileValidator } from '../../src/http/validation.js'
import { COMPONENTS } from '../../src/schemas/components.js'
import { LIMIT_DEFAULT, ListPetsQuery, NewPet, Pet, PetParams, Pets } from '../../src/schemas/pets.js'
import { refTo } from '../../src/schemas/ref.js'

// Fastify's own errors that reach the handler, by status, in the catalogue's codes.
const CODES: Record<number, string> = { 400: 'malformed_json', 404: 'not_found', 413: 'payload_too_large', 415: 'unsupported_media_type' }

function badCursor (): AppError {
  return new AppError('validation_failed', 'cursor: must be a cursor from the Link header of the previous page, unchanged')
}

/**
 * The peer's Fastify instance over animals 1..animals, not listening yet.
 * @example const app = await fastifyPeer(10_000); await app.listen({ port: 8080 })
 */
export async function fastifyPeer (animals: number): Promise<FastifyInstance> {
  const pets: Animal[] = generateAnimals(animals)
  const app = Fastify({ bodyLimit: 16 * 1024 }).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(compileValidator)
  // JSON bodies only, as the service takes them: any other type is a 415.
  app.removeContentTypeParser('text/plain')
  for (const schema of COMPONENTS) app.addSchema(schema)
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const status = error instanceof AppError ? error.status : error.statusCode ?? 500
    const code = error instanceof AppError ? error.code : CODES[status] ?? 'internal_error'
    return reply.code(status).send({ code, message: error.message, status })
  })
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ code: 'not_found', message: `${request.method} ${request.url}: no such operation`, status: 404 }))

  app.get('/readyz', async () => ({ status: 'ready' }))

  app.get('/v1/pets', { schema: { querystring: ListPetsQuery, response: { 200: refTo(Pets) } } }, async (request, reply) => {
    const { status, cursor } = request.query
    const limit = Number(request.query.limit ?? LIMIT_DEFAULT)
    // The cursor is the bare last id of the previous page, as the ceiling's.
    if (cursor !== undefined && !/^[0-9]{1,15}$/.test(cursor)) throw badCursor()
    const page: Animal[] = []
    let more = false
    // Animal n sits at index n - 1; one match more than the page tells whether a next page exists.
    for (let index = cursor === undefined ? 0 : Number(cursor); index < pets.length; index++) {
      if (status !== undefined && pets[index]!.status !== status) continue
      if (page.length === limit) { more = true; break }
      page.push(pets[index]!)
    }
    if (more) {
      const query = new URLSearchParams({ limit: String(limit), ...(status === undefined ? {} : { status }), cursor: String(page[page.length - 1]!.id) })
      reply.header('link', `<${request.protocol}://${request.host}/v1/pets?${query}>; rel="next"`)
    }
    return page
  })

  app.get('/v1/pets/:petId', { schema: { params: PetParams, response: { 200: refTo(Pet) } } }, async (request) => {
    const pet = pets[Number(request.params.petId) - 1]
    if (pet === undefined) throw new AppError('not_found', `petId: no animal with id ${request.params.petId}`)
    return pet
  })

  app.post('/v1/pets', { schema: { body: refTo(NewPet), response: { 201: refTo(Pet) } } }, async (request, reply) => {
    const { name, categoryId, status = 'available' } = request.body
    const pet: Animal = { id: pets.length + 1, name, categoryId: Number(categoryId), status }
    pets.push(pet)
    reply.header('location', `${request.protocol}://${request.host}/v1/pets/${pet.id}`)
    reply.code(201)
    return pet
  })
  return app
}

// Started as a process (`node fastify-memory.js`), not when imported.
if (isMain(import.meta.url)) {
  const app = await fastifyPeer(Number(process.env.BENCH_ANIMALS ?? '10000'))
  // The same header and request time limits as the service keep the comparison even.
  app.server.headersTimeout = 10_000
  app.server.requestTimeout = 30_000
  await app.listen({ port: Number(process.env.PORT ?? '0'), host: '127.0.0.1' })
  process.once('SIGTERM', () => { app.close().finally(() => process.exit(0)) })
}
