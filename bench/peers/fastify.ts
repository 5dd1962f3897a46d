/**
 * Peer: the app a team writes in a day from the Fastify ecosystem's own plugins, each with its
 * defaults: Fastify's request logging (`logger: true`, two lines a request, to stdout: a file
 * here), @fastify/helmet, @fastify/rate-limit (counting, never reached), fastify-metrics
 * (prom-client, per-route histograms), @fastify/bearer-auth; JSON schemas on every route; one
 * commit per create. On storage.ts: better-sqlite3 or a `pg` pool of 10, plain queries.
 *
 * PORT, DATABASE_URL (`sqlite:PATH` or `postgres://…`), BENCH_ANIMALS_FILE and BENCH_KEY
 * in the environment; GET /readyz answers once it listens.
 */
import { createRequire } from 'node:module'
import Fastify, { type FastifyPluginAsync } from 'fastify'
import bearerAuth from '@fastify/bearer-auth'
import helmet from '@fastify/helmet'
import rateLimit from '@fastify/rate-limit'
import { openStorage, type NewPet, type Status } from './storage.js'

// Loaded untyped: its type declarations would give every FastifyInstance in the project, the service's too, `metrics`.
type Metrics = { default: FastifyPluginAsync<{ endpoint: string }> }
const metrics = (createRequire(import.meta.url)('fastify-metrics') as Metrics).default
const storage = await openStorage(process.env.DATABASE_URL!, process.env.BENCH_ANIMALS_FILE!, false)
const Pet = {
  type: 'object',
  required: ['id', 'name', 'categoryId', 'status'],
  properties: {
    id: { type: 'integer' }, name: { type: 'string' }, categoryId: { type: 'integer' }, status: { type: 'string' }
  }
} as const
const status = { type: 'string', enum: ['available', 'pending', 'sold'] } as const
const cursor = { type: 'string', pattern: '^[0-9]{1,15}$' } as const
const name = { type: 'string', minLength: 1, maxLength: 255 } as const
const newPet = { name, categoryId: { type: 'integer', minimum: 1 }, status } as const

const app = Fastify({ logger: true })
await app.register(helmet)
await app.register(rateLimit, { max: 1_000_000_000, timeWindow: '1 minute' })
await app.register(metrics, { endpoint: '/metrics' })
app.get('/readyz', async () => ({ status: 'ready' }))
app.addHook('onClose', async () => { await storage.close() })

await app.register(async (api) => {
  await api.register(bearerAuth, { keys: new Set([process.env.BENCH_KEY!]) })

  api.get<{ Querystring: { limit: number, status?: Status, cursor?: string } }>('/v1/pets', {
    schema: {
      querystring: {
        type: 'object',
        properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, status, cursor }
      },
      response: { 200: { type: 'array', items: Pet } }
    }
  }, async (request, reply) => {
    const { limit, status, cursor } = request.query
    const pets = await storage.list(limit + 1, status, Number(cursor ?? 0))
    const page = pets.slice(0, limit)
    if (pets.length > limit) {
      const filter: Record<string, string> = status === undefined ? {} : { status }
      const next = new URLSearchParams({ limit: String(limit), ...filter, cursor: String(page.at(-1)!.id) })
      reply.header('link', `<${request.protocol}://${request.host}/v1/pets?${next}>; rel="next"`)
    }
    return page
  })

  api.get<{ Params: { id: number } }>('/v1/pets/:id', {
    schema: { params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } } }, response: { 200: Pet } }
  }, async (request, reply) => await storage.get(request.params.id) ?? reply.code(404).send({ message: 'not found' }))

  api.post<{ Body: NewPet }>('/v1/pets', {
    schema: {
      body: { type: 'object', required: ['name', 'categoryId'], additionalProperties: false, properties: newPet },
      response: { 201: Pet }
    }
  }, async (request, reply) => {
    const pet = await storage.create({ ...request.body, status: request.body.status ?? 'available' })
    return await reply.code(201).header('location', `${request.protocol}://${request.host}/v1/pets/${pet.id}`).send(pet)
  })
})

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.once('SIGTERM', () => { app.close().finally(() => process.exit(0)) })
