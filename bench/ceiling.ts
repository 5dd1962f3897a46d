/**
 * The ceiling: a bare node:http server that gives the same answers as the
 * service for its three operations with the least real work (key check, query
 * check, filter, slice, JSON), from memory. No framework, no database, no log:
 * what Node itself allows on this machine, the figure the service is held to.
 * Its request handling (apiHandler) is shared with the bare peers (bench/peers/),
 * so they differ from it in their storage alone.
 *
 * Run as a process of its own: PORT, BENCH_KEY and BENCH_ANIMALS in the
 * environment; it answers GET /readyz once it listens.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import { pathToFileURL } from 'node:url'
import { STATUSES, generateAnimals, type Animal, type Status } from './animals.js'

const JSON_TYPE = 'application/json; charset=utf-8'
const LIMIT_DEFAULT = 20
const LIMIT_MAX = 100
const BODY_MAX = 16 * 1024

/** An animal to add: what a create's body gives. */
export type NewAnimal = Omit<Animal, 'id'>

/** A checked list query; `afterId` comes from the cursor, the bare last id of the previous page. */
export interface ListQuery {
  limit: number
  status: Status | undefined
  afterId: number
}

/** The storage behind apiHandler: each operation answers through `res`, with send, fail, sendPage or sendCreated. */
export interface PetOperations {
  listPets: (res: ServerResponse, query: ListQuery, origin: string) => void
  getPet: (res: ServerResponse, id: number) => void
  createPet: (res: ServerResponse, fields: NewAnimal, origin: string) => void
}

/** A JSON answer with its length, as Fastify sends a string body. */
export function send (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  // A known length spares the chunked encoding, as Fastify does for a string body.
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...headers })
  res.end(body)
}

/** The spec's error body. */
export function fail (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  send(res, status, JSON.stringify({ code, message, status }), headers)
}

/** The first `limit` animals after `afterId` with that status (all when none), and whether more match. */
function page (animals: Animal[], { limit, status, afterId }: ListQuery): { pets: Animal[], more: boolean } {
  // Animal n sits at index n - 1: the page starts at index afterId.
  if (status === undefined) return { pets: animals.slice(afterId, afterId + limit), more: animals.length > afterId + limit }
  const pets: Animal[] = []
  // Stops at limit + 1 matches: one more than the page tells whether a next page exists.
  for (let index = afterId; index < animals.length; index++) {
    const animal = animals[index]!
    if (animal.status !== status) continue
    if (pets.length === limit) return { pets, more: true }
    pets.push(animal)
  }
  return { pets, more: false }
}

/** The list query checked as the service checks it, or the message of its 400. */
function readListQuery (query: string): ListQuery | string {
  const params = new URLSearchParams(query)
  const limitText = params.get('limit')
  const statusText = params.get('status')
  const cursorText = params.get('cursor')
  let limit = LIMIT_DEFAULT
  if (limitText !== null) {
    limit = /^[0-9]{1,3}$/.test(limitText) ? Number(limitText) : 0
    if (limit < 1 || limit > LIMIT_MAX) return `limit: must be an integer from 1 to ${LIMIT_MAX}`
  }
  if (statusText !== null && !(STATUSES as readonly string[]).includes(statusText)) {
    return `status: must be one of ${STATUSES.join(', ')}`
  }
  if (cursorText !== null && !/^[0-9]{1,15}$/.test(cursorText)) return 'cursor: must be a cursor from the Link header of the previous page, unchanged'
  return { limit, status: (statusText ?? undefined) as Status | undefined, afterId: cursorText === null ? 0 : Number(cursorText) }
}

/**
 * A page as the service sends it: the animals, and when more match, the same Link with
 * the last id as an unsigned cursor (the least work).
 * @example sendPage(res, rows.slice(0, query.limit), rows.length > query.limit, query, origin)
 */
export function sendPage (res: ServerResponse, pets: Animal[], more: boolean, { limit, status }: ListQuery, origin: string): void {
  const headers: Record<string, string> = {}
  if (more) {
    const next = `limit=${limit}${status === undefined ? '' : `&status=${status}`}&cursor=${pets[pets.length - 1]!.id}`
    headers.link = `<${origin}/v1/pets?${next}>; rel="next"`
  }
  send(res, 200, JSON.stringify(pets), headers)
}

/** The animal, or the 404 of an id nobody has. */
export function sendPet (res: ServerResponse, animal: Animal | undefined, id: number): void {
  if (animal === undefined) return fail(res, 404, 'not_found', `petId: no animal with id ${id}`)
  send(res, 200, JSON.stringify(animal))
}

/** The 201 of a create, with the new animal's Location. */
export function sendCreated (res: ServerResponse, animal: Animal, origin: string): void {
  send(res, 201, JSON.stringify(animal), { location: `${origin}/v1/pets/${animal.id}` })
}

/** The body of a create, checked as the service checks it; undefined when it is not a new animal. */
export function readNewPet (text: string): NewAnimal | undefined {
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

/** Reads and checks a create's body (415, 413, 400 as the service answers them), then hands its fields on. */
function readNewPetBody (req: IncomingMessage, res: ServerResponse, then: (fields: NewAnimal) => void): void {
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
    then(fields)
  })
}

/**
 * The API's three operations on bare node:http: routes, checks the key (when one is given),
 * the query, the id and the body, and leaves the storage to `operations`.
 * @example createServer(apiHandler(operations, undefined)).listen(8080)
 */
export function apiHandler (operations: PetOperations, apiKey: string | undefined): RequestListener {
  const expected = apiKey === undefined ? undefined : `Bearer ${apiKey}`
  return (req, res) => {
    const url = req.url ?? '/'
    const mark = url.indexOf('?')
    const path = mark === -1 ? url : url.slice(0, mark)
    if (path === '/readyz') return send(res, 200, '{"status":"ready"}')
    if (expected !== undefined && req.headers.authorization !== expected) {
      return fail(res, 401, 'unauthorized', 'Authorization: a valid API key is required', { 'www-authenticate': 'Bearer realm="petstore"' })
    }
    const origin = `http://${req.headers.host ?? 'localhost'}`
    if (path === '/v1/pets') {
      if (req.method === 'GET') {
        const query = readListQuery(mark === -1 ? '' : url.slice(mark + 1))
        if (typeof query === 'string') return fail(res, 400, 'validation_failed', query)
        return operations.listPets(res, query, origin)
      }
      if (req.method === 'POST') return readNewPetBody(req, res, (fields) => operations.createPet(res, fields, origin))
    } else if (path.startsWith('/v1/pets/') && req.method === 'GET') {
      const idText = path.slice('/v1/pets/'.length)
      if (!/^[1-9][0-9]{0,15}$/.test(idText)) return fail(res, 400, 'validation_failed', 'petId: must be an integer from 1 to 9223372036854775807')
      return operations.getPet(res, Number(idText))
    }
    fail(res, 404, 'not_found', `${req.method ?? ''} ${path}: no such operation`)
  }
}

/**
 * The ceiling's request handler over these animals, for this API key.
 * @example createServer(ceilingHandler(generateAnimals(10_000), 'bench-key-0123456789')).listen(8080)
 */
export function ceilingHandler (animals: Animal[], apiKey: string): RequestListener {
  return apiHandler({
    listPets: (res, query, origin) => {
      const { pets, more } = page(animals, query)
      sendPage(res, pets, more, query, origin)
    },
    getPet: (res, id) => sendPet(res, animals[id - 1], id),
    createPet: (res, fields, origin) => {
      const animal: Animal = { id: animals.length + 1, ...fields }
      animals.push(animal)
      sendCreated(res, animal, origin)
    }
  }, apiKey)
}

/**
 * Listens on PORT with the service's header and request time limits (the comparison stays
 * even), and closes on SIGTERM, running `onClose` once the server has closed.
 * @example serveUntilTerminated(createServer(handler), async () => { db.close() })
 */
export function serveUntilTerminated (server: Server, onClose: () => Promise<void> = async () => {}): void {
  server.headersTimeout = 10_000
  server.requestTimeout = 30_000
  server.listen(Number(process.env.PORT ?? '0'), '127.0.0.1')
  process.once('SIGTERM', () => {
    server.close(() => { onClose().finally(() => process.exit(0)) })
    server.closeAllConnections()
  })
}

/**
 * True when `moduleUrl` is the script node was started with, not a module imported by another.
 * @example if (isMain(import.meta.url)) serveUntilTerminated(server)
 */
export function isMain (moduleUrl: string): boolean {
  return process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === moduleUrl
}

// Started as a process (`node ceiling.js`), not when imported.
if (isMain(import.meta.url)) {
  serveUntilTerminated(createServer(ceilingHandler(generateAnimals(Number(process.env.BENCH_ANIMALS ?? '10000')), process.env.BENCH_KEY ?? '')))
}
