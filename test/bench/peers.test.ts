/**
 * The bench's peers (bench/peers/) must answer the bench's requests as the service does, or
 * the service's ratio to them would compare other work: the same statuses and error codes,
 * the same bodies, a Link to the next page that leads to the same page, a Location that
 * leads to the created animal. Real HTTP; the service through test/helper.ts on the same animals.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type RequestListener, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { generateAnimals } from '../../bench/animals.js'
import { fastifyPeer } from '../../bench/peers/fastify-memory.js'
import { pgPeer } from '../../bench/peers/http-pg.js'
import { sqlitePeer } from '../../bench/peers/http-sqlite.js'
import { runNpm } from '../../bench/npm.js'
import { buildBenchScripts, startScript } from '../../bench/targets.js'
import { AUTH, JSON_AUTH, POSTGRES_SKIPPED, startTestServer, type TestServer } from '../helper.js'
import { createSchema } from '../postgres-schema.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const ANIMALS = 50

interface Seen { request: string, status: number, body: unknown, link?: string | null, location?: string | null }

/** A response with what may be compared: the Link and the Location without the origin, the cursor left out (each target has its own). */
async function see (origin: string, path: string, init: RequestInit = {}): Promise<Seen & { next?: string }> {
  const response = await fetch(`${origin}${path}`, { ...init, headers: { ...AUTH, ...init.headers } })
  const body = await response.json()
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/, `${path}: content-type`)
  const seen: Seen & { next?: string } = { request: `${init.method ?? 'GET'} ${path.replace(/cursor=[^&]+/, 'cursor=…')}`, status: response.status, body: response.status < 300 ? body : (body as { code: string }).code }
  const link = response.headers.get('link')
  if (init.method === undefined && path.startsWith('/v1/pets?')) {
    seen.link = link?.replace(origin, '').replace(/cursor=[^&>]+/, 'cursor=…') ?? null
    const next = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1]
    if (next !== undefined) seen.next = next.replace(origin, '')
  }
  if (init.method === 'POST') seen.location = response.headers.get('location')?.replace(origin, '') ?? null
  return seen
}

/** What a target answers to the bench's requests, the pages their Links lead to, and a few it must refuse. */
async function answers (origin: string): Promise<Seen[]> {
  const seen: Seen[] = []
  const record = async (path: string, init?: RequestInit): Promise<Seen & { next?: string }> => {
    const { next, ...answer } = await see(origin, path, init)
    seen.push(answer)
    return { ...answer, next }
  }
  for (const path of ['/v1/pets?limit=20', '/v1/pets?limit=20&status=available', '/v1/pets?status=sold&limit=7']) {
    const { next } = await record(path)
    assert.ok(next !== undefined, `${path}: a Link to the next page`)
    await record(next)
  }
  for (const path of ['/v1/pets', '/v1/pets?limit=100&status=pending', '/v1/pets?limit=0', '/v1/pets?status=lost', '/v1/pets/7', `/v1/pets/${ANIMALS}`, `/v1/pets/${ANIMALS + 1}`, '/v1/pets/abc']) {
    await record(path)
  }
  const post = (body: string): RequestInit => ({ method: 'POST', headers: JSON_AUTH, body })
  const created = await record('/v1/pets', post('{"name":"Rex","categoryId":3}'))
  await record(created.location!)
  await record('/v1/pets', post('{"name":"Tom","categoryId":9,"status":"sold"}'))
  await record('/v1/pets', post('{"name":"Rex"}'))
  await record('/v1/pets', { method: 'POST', headers: AUTH, body: '{"name":"Rex","categoryId":3}' })
  // Concurrent creates: the SQLite peer commits them in groups; each gets its own id.
  const many = await Promise.all(Array.from({ length: 10 }, async (_, index) => await see(origin, '/v1/pets', post(`{"name":"Pup ${index}","categoryId":${index + 1}}`))))
  seen.push(...many.map(({ status, body }) => ({ request: 'POST /v1/pets (concurrent)', status, body: { ...(body as object), id: 0 } })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))))
  assert.deepEqual(new Set(many.map(({ body }) => (body as { id: number }).id)).size, many.length, 'each concurrent create gets its own id')
  // Every create is listed, in id order (which name got which id depends on arrival).
  const { body: all } = await see(origin, '/v1/pets?limit=100')
  seen.push({ request: 'GET /v1/pets?limit=100 (ids)', status: 200, body: (all as Array<{ id: number }>).map(({ id }) => id) })
  return seen
}

async function listen (listener: RequestListener): Promise<{ origin: string, server: Server }> {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server }
}

async function serviceAnswers (backend: 'sqlite' | 'postgres'): Promise<Seen[]> {
  const service: TestServer = await startTestServer({ backend })
  try {
    await service.store.importPets(generateAnimals(ANIMALS))
    return await answers(service.origin)
  } finally {
    await service.close()
  }
}

describe('bench peers on SQLite and in memory', () => {
  let dir: string
  let expected: Seen[]

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-peers-'))
    expected = await serviceAnswers('sqlite')
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('Fastify in memory answers as the service does', async () => {
    const app = await fastifyPeer(ANIMALS)
    const origin = (await app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1')
    try {
      assert.deepEqual(await answers(origin), expected)
    } finally {
      await app.close()
    }
  })

  it('node:http + SQLite answers as the service does', async () => {
    const { listener, close } = sqlitePeer(join(dir, 'peer.db'), ANIMALS)
    const { origin, server } = await listen(listener)
    try {
      assert.deepEqual(await answers(origin), expected)
    } finally {
      server.close()
      close()
    }
  })

  it('starts compiled, as the bench starts the peers, and answers', { skip: process.platform === 'linux' ? false : 'reads /proc (Linux)' }, async () => {
    // The compiled Fastify peer imports the service's schemas from dist/, as the bench runs it.
    if (!existsSync(join(ROOT, 'dist/schemas/components.js'))) await runNpm(ROOT, ['run', '--silent', 'build'])
    const scripts = await buildBenchScripts(ROOT, join(dir, 'scripts'))
    for (const [name, script, env] of [['Fastify', scripts.fastifyMemory, {}], ['SQLite', scripts.httpSqlite, { BENCH_DB: join(dir, 'compiled.db') }]] as const) {
      const target = await startScript(name, { script, animals: ANIMALS, env, cpus: undefined, logFile: join(dir, `${name}.log`) })
      try {
        const { status, body } = await see(target.origin, '/v1/pets/7')
        assert.deepEqual({ status, body }, { status: 200, body: generateAnimals(7)[6] }, name)
      } finally {
        await target.stop()
      }
    }
  })
})

describe('bench peer on PostgreSQL', { skip: process.env.TEST_DATABASE_URL === undefined ? POSTGRES_SKIPPED : false }, () => {
  it('node:http + pg answers as the service on PostgreSQL does', async () => {
    const expected = await serviceAnswers('postgres')
    const schema = await createSchema(process.env.TEST_DATABASE_URL!, 'peer')
    try {
      const { listener, close } = await pgPeer(schema.url, ANIMALS)
      const { origin, server } = await listen(listener)
      try {
        assert.deepEqual(await answers(origin), expected)
      } finally {
        server.close()
        await close()
      }
    } finally {
      await schema.drop()
    }
  })
})
