/**
 * What the service's features cost without a framework: the ceiling's get and
 * create on bare `node:http`, with the service's own pieces added one at a time
 * (each step keeps the ones before it). The last step does all a get or a create
 * of the service does, minus Fastify and the plugins that answer other requests;
 * its ratio to the ceiling bounds what any server with these features can reach.
 *
 * Run as a process of its own, from the TypeScript sources (it imports src/):
 * PORT, BENCH_KEY, BENCH_DB (a migrated SQLite file) and FEATURES (steps, comma
 * separated) in the environment; it answers GET /readyz once it listens.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http'
import { pathToFileURL } from 'node:url'
import type { Logger } from 'pino'
import { GETPET_DEPRECATED_AT, parseConfig } from '../src/config.js'
import { ApiKeyVerifier, type Caller } from '../src/domain/api-keys.js'
import { HttpError as AppError } from '../src/http/errors.js'
import { PetCatalogue } from '../src/domain/pets.js'
import { deprecationHeaderValues } from '../src/http/plugins/deprecation.js'
import { Metrics, childCache } from '../src/http/plugins/metrics.js'
import { RATE_LIMIT_WINDOW_MS, rateLimitHeaders } from '../src/http/plugins/rate-limit.js'
import { BEHIND_KEY } from '../src/http/plugins/response-headers.js'
import { WindowCounts } from '../src/http/window-counts.js'
import { createLogger } from '../src/logger.js'
import { openSqliteStore } from '../src/store/sqlite/store.js'
import type { Store } from '../src/store/store.js'
import { generateAnimals, type Animal } from './animals.js'
import { readNewPet, send } from './ceiling.js'
import { FEATURE_STEPS, type Feature } from './feature-steps.js'
import { RATE_LIMIT_NEVER_REACHED } from './targets.js'

// The default sunset and the rate limit, as the service started by the bench has them.
const SUNSET = parseConfig({}).getPetSunset.toUTCString()
const RATE_LIMIT = Number(RATE_LIMIT_NEVER_REACHED)
const ID = /^[1-9][0-9]{0,15}$/

export interface FeatureCostsOptions {
  features: readonly Feature[]
  apiKey: string
  /** The animals of the database, for the steps that serve from memory. */
  animals: number
  /** A SQLite file migrated and filled with the same animals (`petstore import`). */
  databasePath: string
  /** Where the log step writes; the service's logger on stdout when left out. */
  logger?: Logger
}

interface Answer { status: number, body: string, headers: Record<string, string> }

/**
 * The request listener of one step, and a close that ends its store.
 * @example const { listener } = await featureCostsListener({ features: ['durable'], apiKey, animals: 10_000, databasePath })
 */
export async function featureCostsListener (options: FeatureCostsOptions): Promise<{ listener: RequestListener, close: () => Promise<void> }> {
  const has = new Set(options.features)
  const animals: Animal[] = generateAnimals(options.animals)
  let store: Store | undefined
  let catalogue: PetCatalogue | undefined
  if (has.has('durable')) {
    store = openSqliteStore(options.databasePath)
    catalogue = new PetCatalogue(store, await store.secret('cursor'))
  }
  const verifier = has.has('key-hash') && store !== undefined ? new ApiKeyVerifier(store, { readWrite: [options.apiKey], readOnly: [] }, () => {}) : undefined
  const expected = `Bearer ${options.apiKey}`
  const caller: Caller = { keyName: 'env-1', nameHash: '', scopes: new Set(['pets:read', 'pets:write']), rateLimit: undefined }
  const metrics = has.has('metrics') ? new Metrics() : undefined
  const counters = childCache<{ inc: () => void }>()
  const histograms = childCache<{ observe: (seconds: number) => void }>()
  // getPet's deprecation headers, made once per Host as the service makes them once per base address.
  let deprecation: { host: string, headers: Record<string, string> } | undefined
  const logger = has.has('log') ? options.logger ?? createLogger('info') : undefined
  // In memory, so its warning of a Redis outage never comes: the logger is never written to.
  const rateLimit = has.has('rate-limit')
    ? { counts: new WindowCounts({ windowMs: RATE_LIMIT_WINDOW_MS, redis: undefined, redisPrefix: '', counted: 'requests' }), log: createLogger('silent') }
    : undefined

  const callerOf = async (authorization: string | undefined): Promise<Caller | undefined> => {
    if (verifier === undefined) return authorization === expected ? caller : undefined
    const verdict = authorization?.startsWith('Bearer ') === true ? await verifier.verify(authorization.slice(7)) : undefined
    return verdict?.kind === 'valid' ? verdict.caller : undefined
  }

  const finish = (req: IncomingMessage, res: ServerResponse, operation: string, started: bigint, answer: Answer): void => {
    if (has.has('headers')) {
      answer.headers['x-request-id'] = randomUUID()
      Object.assign(answer.headers, BEHIND_KEY)
      if (operation === 'getPet') {
        const host = req.headers.host ?? 'localhost'
        if (deprecation?.host !== host) deprecation = { host, headers: deprecationHeaderValues(GETPET_DEPRECATED_AT, SUNSET, `http://${host}/v1`) }
        Object.assign(answer.headers, deprecation.headers)
      }
    }
    if (metrics !== undefined || logger !== undefined) {
      res.once('finish', () => {
        const micros = Number(process.hrtime.bigint() - started) / 1000
        if (metrics !== undefined) {
          const status = String(answer.status)
          counters(`${operation} ${status}`, () => metrics.requests.labels(operation, status)).inc()
          histograms(operation, () => metrics.latency.labels(operation)).observe(micros / 1e6)
        }
        logger?.info({ requestId: answer.headers['x-request-id'] ?? '', method: req.method, route: operation, status: answer.status, micros: Math.round(micros) }, 'request')
      })
    }
    write(res, answer)
  }

  const getPet = async (idText: string): Promise<Answer> => {
    if (!ID.test(idText)) return failure(400, 'validation_failed', 'petId: must be an integer from 1 to 9223372036854775807')
    if (catalogue === undefined) {
      const animal = animals[Number(idText) - 1]
      return animal === undefined ? failure(404, 'not_found', `petId: no animal with id ${idText}`) : { status: 200, body: JSON.stringify(animal), headers: {} }
    }
    return { status: 200, body: JSON.stringify(await catalogue.getPet(Number(idText))), headers: {} }
  }

  const createPet = async (req: IncomingMessage, who: Caller): Promise<Answer> => {
    const fields = readNewPet(await bodyOf(req))
    if (fields === undefined) return failure(400, 'validation_failed', 'body: must be {"name", "categoryId", "status"?}')
    let pet: Animal
    if (catalogue === undefined) {
      pet = { id: animals.length + 1, ...fields }
      animals.push(pet)
    } else {
      pet = (await catalogue.createPet(fields, who)).pet as Animal
    }
    return { status: 201, body: JSON.stringify(pet), headers: { location: `http://${req.headers.host ?? 'localhost'}/v1/pets/${pet.id}` } }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = process.hrtime.bigint()
    const url = req.url ?? '/'
    if (url === '/readyz') return write(res, { status: 200, body: '{"status":"ready"}', headers: {} })
    const who = await callerOf(req.headers.authorization)
    if (who === undefined) {
      return finish(req, res, 'unauthorized', started, failure(401, 'unauthorized', 'Authorization: a valid API key is required', { 'www-authenticate': 'Bearer realm="petstore"' }))
    }
    if (rateLimit !== undefined) {
      for (const [name, value] of Object.entries(rateLimitHeaders(RATE_LIMIT, await rateLimit.counts.add(who.keyName, rateLimit.log)).headers)) res.setHeader(name, value)
    }
    if (req.method === 'GET' && url.startsWith('/v1/pets/')) {
      return finish(req, res, 'getPet', started, await getPet(url.slice('/v1/pets/'.length)).catch(answerError))
    }
    if (req.method === 'POST' && url === '/v1/pets') {
      return finish(req, res, 'createPet', started, await createPet(req, who).catch(answerError))
    }
    finish(req, res, 'unmatched', started, failure(404, 'not_found', `${req.method ?? ''} ${url}: no such operation`))
  }
  const listener: RequestListener = (req, res) => { void handle(req, res) }
  return { listener, close: async () => { await store?.close() } }
}

/** The body as the ceiling reads it: events, not an async iterator, which costs more. */
async function bodyOf (req: IncomingMessage): Promise<string> {
  return await new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.once('error', reject)
  })
}

function failure (status: number, code: string, message: string, headers: Record<string, string> = {}): Answer {
  return { status, body: JSON.stringify({ code, message, status }), headers }
}

function answerError (err: unknown): Answer {
  if (err instanceof AppError) return failure(err.status, err.code, err.message)
  return failure(500, 'internal_error', 'the server failed to answer')
}

function write (res: ServerResponse, { status, body, headers }: Answer): void {
  send(res, status, body, headers)
}

// Started as a process (`node --import tsx feature-costs.ts`), not when imported.
if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const features = (process.env.FEATURES ?? '').split(',').filter((name) => name !== '')
  const unknown = features.filter((name) => !(FEATURE_STEPS as readonly string[]).includes(name))
  if (unknown.length > 0) throw new Error(`FEATURES: unknown ${unknown.join(', ')}`)
  const { listener, close } = await featureCostsListener({
    features: features as Feature[],
    apiKey: process.env.BENCH_KEY ?? '',
    animals: Number(process.env.BENCH_ANIMALS ?? '10000'),
    databasePath: process.env.BENCH_DB ?? ''
  })
  const server = createServer(listener)
  server.headersTimeout = 10_000
  server.requestTimeout = 30_000
  server.listen(Number(process.env.PORT ?? '0'), '127.0.0.1')
  process.once('SIGTERM', () => {
    server.close(() => { void close().then(() => process.exit(0)) })
    server.closeAllConnections()
  })
}
