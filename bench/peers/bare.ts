/**
 * Peer: bare `node:http` on storage.ts, the least a server can do for the same answers: check
 * the bearer key, the query, the id and the body by hand, `JSON.stringify`, no log, no
 * metrics. On SQLite its creates share a transaction (group commit), as the service's do.
 *
 * PORT, DATABASE_URL (`sqlite:PATH` or `postgres://…`), BENCH_ANIMALS_FILE and BENCH_KEY
 * in the environment; GET /readyz answers once it listens.
 */
import { createServer, type ServerResponse } from 'node:http'
import { openStorage, type NewPet, type Status } from './storage.js'

const STATUSES = ['available', 'pending', 'sold']
const BODY_RULE = 'body: must be {"name", "categoryId", "status"?}'
const storage = await openStorage(process.env.DATABASE_URL!, process.env.BENCH_ANIMALS_FILE!, true)
const expected = `Bearer ${process.env.BENCH_KEY!}`

function send (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  const length = Buffer.byteLength(text)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': length, ...headers })
  res.end(text)
}

const fail = (res: ServerResponse, status: number, code: string, message: string): void =>
  send(res, status, { code, message, status })

function newPet (text: string): NewPet | undefined {
  try {
    const { name, categoryId, status = 'available', ...rest } = JSON.parse(text) as Record<string, unknown>
    if (Object.keys(rest).length > 0 || typeof name !== 'string' || name.length < 1 || name.length > 255) return
    if (!Number.isSafeInteger(categoryId) || (categoryId as number) < 1 || !STATUSES.includes(status as string)) return
    return { name, categoryId: categoryId as number, status: status as Status }
  } catch {
    return undefined
  }
}

const server = createServer((req, res) => {
  const [path = '', query = ''] = (req.url ?? '').split('?', 2)
  if (path === '/readyz') return send(res, 200, { status: 'ready' })
  if (req.headers.authorization !== expected) {
    return fail(res, 401, 'unauthorized', 'Authorization: a valid API key is required')
  }
  const origin = `http://${req.headers.host ?? 'localhost'}`
  const failed = (err: Error): void => fail(res, 503, 'unavailable', err.message)
  if (path === '/v1/pets' && req.method === 'GET') {
    const params = new URLSearchParams(query)
    const limit = Number(params.get('limit') ?? 20)
    const status = params.get('status') ?? undefined
    const cursor = params.get('cursor') ?? '0'
    const valid = Number.isInteger(limit) && limit >= 1 && limit <= 100 && /^[0-9]{1,15}$/.test(cursor)
    if (!valid || (status !== undefined && !STATUSES.includes(status))) {
      return fail(res, 400, 'validation_failed', 'limit, status or cursor: not valid')
    }
    // One row more than the page tells whether a next page exists.
    storage.list(limit + 1, status as Status | undefined, Number(cursor)).then((pets) => {
      const page = pets.slice(0, limit)
      const next = `limit=${limit}${status === undefined ? '' : `&status=${status}`}&cursor=${page.at(-1)?.id ?? 0}`
      send(res, 200, page, pets.length > limit ? { link: `<${origin}/v1/pets?${next}>; rel="next"` } : {})
    }, failed)
  } else if (path === '/v1/pets' && req.method === 'POST') {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
      const pet = newPet(Buffer.concat(chunks).toString('utf8'))
      if (pet === undefined) return fail(res, 400, 'validation_failed', BODY_RULE)
      storage.create(pet).then((made) => send(res, 201, made, { location: `${origin}/v1/pets/${made.id}` }), failed)
    })
  } else if (path.startsWith('/v1/pets/') && req.method === 'GET' && /^[1-9][0-9]{0,15}$/.test(path.slice(9))) {
    const id = Number(path.slice(9))
    storage.get(id).then((pet) => {
      if (pet === undefined) fail(res, 404, 'not_found', `petId: no animal with id ${id}`)
      else send(res, 200, pet)
    }, failed)
  } else {
    fail(res, 404, 'not_found', `${req.method ?? ''} ${path}: no such operation`)
  }
})
server.listen(Number(process.env.PORT), '127.0.0.1')
process.once('SIGTERM', () => {
  server.close(() => { storage.close().finally(() => process.exit(0)) })
  server.closeAllConnections()
})
