/**
 * The ceiling: a bare node:http server that gives the same answers as the
 * service for its three operations with the least real work (key check, query
 * check, filter, slice, JSON), from memory. No framework, no database, no log:
 * what Node itself allows on this machine, the figure the service is held to.
 *
 * Run as a process of its own: PORT, BENCH_KEY and BENCH_ANIMALS in the
 * environment; it answers GET /readyz once it listens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { pathToFileURL } from 'node:url'
import { STATUSES, generateAnimals, type Animal, type Status } from './animals.js'

const JSON_TYPE = 'application/json; charset=utf-8'
const LIMIT_DEFAULT = 20
const LIMIT_MAX = 100
const BODY_MAX = 16 * 1024

/** A JSON answer with its length, as Fastify sends a string body. */
export function send (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  // A known length spares the chunked encoding, as Fastify does for a string body.
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...headers })
  res.end(body)
}

function fail (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  send(res, status, JSON.stringify({ code, message, status }), headers)
}

/** The first `limit` animals with that status (all when none), and whether more match. */
function page (animals: Animal[], limit: number, status: Status | undefined): { pets: Animal[], more: boolean } {
  if (status === undefined) return { pets: animals.slice(0, limit), more: animals.length > limit }
  const pets: Animal[] = []
  // Stops at limit + 1 matches: one more than the page tells whether a next page exists.
  for (const animal of animals) {
    if (animal.status !== status) continue
    if (pets.length === limit) return { pets, more: true }
    pets.push(animal)
  }
  return { pets, more: false }
}

function listPets (res: ServerResponse, animals: Animal[], query: string, origin: string): void {
  const params = new URLSearchParams(query)
  const limitText = params.get('limit')
  const statusText = params.get('status')
  let limit = LIMIT_DEFAULT
  if (limitText !== null) {
    limit = /^[0-9]{1,3}$/.test(limitText) ? Number(limitText) : 0
    if (limit < 1 || limit > LIMIT_MAX) return fail(res, 400, 'validation_failed', `limit: must be an integer from 1 to ${LIMIT_MAX}`)
  }
  if (statusText !== null && !(STATUSES as readonly string[]).includes(statusText)) {
    return fail(res, 400, 'validation_failed', `status: must be one of ${STATUSES.join(', ')}`)
  }
  const status = (statusText ?? undefined) as Status | undefined
  const { pets, more } = page(animals, limit, status)
  const headers: Record<string, string> = {}
  if (more) {
    // The same Link the service sends, with the last id as an unsigned cursor: the least work.
    const next = `limit=${limit}${status === undefined ? '' : `&status=${status}`}&cursor=${pets[pets.length - 1]!.id}`
    headers.link = `<${origin}/v1/pets?${next}>; rel="next"`
  }
  send(res, 200, JSON.stringify(pets), headers)
}

function getPet (res: ServerResponse, animals: Animal[], idText: string): void {
  if (!/^[1-9][0-9]{0,15}$/.test(idText)) return fail(res, 400, 'validation_failed', 'petId: must be an integer from 1 to 9223372036854775807')
  const animal = animals[Number(idText) - 1]
  if (animal === undefined) return fail(res, 404, 'not_found', `petId: no animal with id ${idText}`)
  send(res, 200, JSON.stringify(animal))
}

/** The body of a create, checked as the service checks it; undefined when it is not a new animal. */
export function readNewPet (text: string): Omit<Animal, 'id'> | undefined {
  let value: unknown
  try { value = JSON.parse(text) } catch { return undefined }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const { name, categoryId, status = 'available', ...rest } = value as Record<string, unknown>
  if (Object.keys(rest).length > 0) return undefined
  if (typeof name !== 'string' || name.length < 1 || name.length > 255) return undefined
  if (!Number.isSafeInteger(categoryId) || (categoryId as number) < 1) return undefined
  if (typeof status !== 'string' || !(STATUSES as readonly string[]).includes(status)) return undefined
  return { name, categoryId: categoryId as number, status: status as Status }
}

function createPet (req: IncomingMessage, res: ServerResponse, animals: Animal[], origin: string): void {
  if (req.headers['content-type']?.startsWith('application/json') !== true) {
    return fail(res, 415, 'unsupported_media_type', 'Content-Type: must be application/json')
  }
  const chunks: Buffer[] = []
  let size = 0
  req.on('data', (chunk: Buffer) => {
    size += chunk.length
    if (size <= BODY_MAX) chunks.push(chunk)
  })
  req.on('end', () => {
    if (size > BODY_MAX) return fail(res, 413, 'payload_too_large', `body: must be at most ${BODY_MAX} bytes`)
    const fields = readNewPet(Buffer.concat(chunks).toString('utf8'))
    if (fields === undefined) return fail(res, 400, 'validation_failed', 'body: must be {"name", "categoryId", "status"?}')
    const animal: Animal = { id: animals.length + 1, ...fields }
    animals.push(animal)
    send(res, 201, JSON.stringify(animal), { location: `${origin}/v1/pets/${animal.id}` })
  })
}

/**
 * The ceiling's request handler over these animals, for this API key.
 * @example createServer(ceilingHandler(generateAnimals(10_000), 'bench-key-0123456789')).listen(8080)
 */
export function ceilingHandler (animals: Animal[], apiKey: string): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = `Bearer ${apiKey}`
  return (req, res) => {
    const url = req.url ?? '/'
    const mark = url.indexOf('?')
    const path = mark === -1 ? url : url.slice(0, mark)
    if (path === '/readyz') return send(res, 200, '{"status":"ready"}')
    if (req.headers.authorization !== expected) {
      return fail(res, 401, 'unauthorized', 'Authorization: a valid API key is required', { 'www-authenticate': 'Bearer realm="petstore"' })
    }
    const origin = `http://${req.headers.host ?? 'localhost'}`
    if (path === '/v1/pets') {
      if (req.method === 'GET') return listPets(res, animals, mark === -1 ? '' : url.slice(mark + 1), origin)
      if (req.method === 'POST') return createPet(req, res, animals, origin)
    } else if (path.startsWith('/v1/pets/') && req.method === 'GET') {
      return getPet(res, animals, path.slice('/v1/pets/'.length))
    }
    fail(res, 404, 'not_found', `${req.method ?? ''} ${path}: no such operation`)
  }
}

// Started as a process (`node ceiling.js`), not when imported.
if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const port = Number(process.env.PORT ?? '0')
  const server = createServer(ceilingHandler(generateAnimals(Number(process.env.BENCH_ANIMALS ?? '10000')), process.env.BENCH_KEY ?? ''))
  // The same header and request time limits as the service keep the comparison even.
  server.headersTimeout = 10_000
  server.requestTimeout = 30_000
  server.listen(port, '127.0.0.1')
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0))
    server.closeAllConnections()
  })
}
