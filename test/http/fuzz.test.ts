/**
 * Property-based: generated requests thrown at a live server over real HTTP.
 * Never a 5xx, always the Error body on an error, and the service keeps working.
 * Short and seeded by default; FUZZ_RUNS=5000 (and FUZZ_SEED) for a long run.
 */
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { TEST_KEY } from '../support/constants.js'
import { backends, post, startTestServer, type TestServer } from '../support/helper.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 300)
const SEED = Number(process.env.FUZZ_SEED ?? 20261122)

interface Sent {
  method: string
  path: string
  headers: Record<string, string>
  body: string | undefined
}

interface Received {
  status: number
  contentType: string
  body: string
}

async function send (origin: string, sent: Sent): Promise<Received> {
  const { hostname, port } = new URL(origin)
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method: sent.method, path: sent.path, headers: sent.headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString() }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(sent.body)
  })
}

const headerText = fc.string({ maxLength: 40 }).map((text) => text.replace(/[^\t\x20-\x7e]/g, ''))
const segment = fc.oneof(
  fc.constantFrom('1', '2', '0', '-1', '9223372036854775807', '9223372036854775808', '1e3', '0x1', '%2F', '%2e%2e', '..', '%00', '%', '%zz', '%C0%AE', 'pets', 'v1', ''),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String)
)
const path = fc.oneof(
  fc.constant('/v1/pets'),
  segment.map((id) => `/v1/pets/${id}`),
  fc.array(segment, { maxLength: 4 }).map((segments) => `/v1/${segments.join('/')}`),
  fc.constantFrom('/healthz', '/readyz', '/v1', '/v1/', '/v1/openapi.json', '/', '/docs', '/v2/pets', '//v1/pets')
)
const query = fc.dictionary(
  fc.constantFrom('limit', 'status', 'cursor', 'x', '__proto__', 'constructor'),
  fc.oneof(fc.constantFrom('0', '1', '20', '100', '101', 'available', 'sold', 'SOLD', '', '1.5', '-1'), fc.string({ maxLength: 20 })),
  { maxKeys: 3 }
).map((params) => {
  const text = new URLSearchParams(params).toString()
  return text === '' ? '' : `?${text}`
})
const jsonBody = fc.oneof(
  fc.record({
    name: fc.oneof(fc.string({ maxLength: 300, unit: 'binary' }), fc.constantFrom('', ' ', '\u3000', 'Rex'), fc.integer()),
    categoryId: fc.oneof(fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }), fc.double(), fc.constantFrom('1', null, true)),
    status: fc.oneof(fc.constantFrom('available', 'pending', 'sold', 'lost', ''), fc.integer())
  }, { requiredKeys: [] }).map((value) => JSON.stringify(value, (_key, v: unknown) => typeof v === 'bigint' ? `__n${v}` : v).replace(/"__n(-?\d+)"/g, '$1')),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200, unit: 'binary' }),
  fc.constantFrom('{"name":"a","categoryId":1,"__proto__":{}}', '{"name":"\\ud800","categoryId":1}', '[[[[[[[[[[]]]]]]]]]]', '{', '')
)
const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  path: fc.tuple(path, query).map(([p, q]) => p + q),
  auth: fc.oneof(fc.constant(`Bearer ${TEST_KEY}`), fc.constant(`bearer ${TEST_KEY}`), fc.constant(undefined), headerText.map((text) => `Bearer ${text}`), headerText),
  contentType: fc.oneof(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'APPLICATION/JSON', ''), headerText, fc.constant(undefined)),
  idempotencyKey: fc.option(fc.oneof(headerText, fc.string({ minLength: 250, maxLength: 300 }).map((text) => text.replace(/[^\x21-\x7e]/g, 'k'))), { nil: undefined }),
  requestId: fc.option(headerText, { nil: undefined }),
  body: fc.option(jsonBody, { nil: undefined })
}).map(({ method, path, auth, contentType, idempotencyKey, requestId, body }): Sent => {
  const headers: Record<string, string> = { host: '127.0.0.1' }
  if (auth !== undefined) headers.authorization = auth
  if (contentType !== undefined && contentType !== '') headers['content-type'] = contentType
  if (idempotencyKey !== undefined && idempotencyKey !== '') headers['idempotency-key'] = idempotencyKey
  if (requestId !== undefined && requestId !== '') headers['x-request-id'] = requestId
  const sendsBody = body !== undefined && method !== 'GET' && method !== 'HEAD'
  if (sendsBody) headers['content-length'] = String(Buffer.byteLength(body))
  return { method, path, headers, body: sendsBody ? body : undefined }
})

for (const backend of backends()) {
  describe(`${backend.name}: generated requests (${RUNS} runs, seed ${SEED})`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name, env: { LOG_LEVEL: 'warn' } }) })
    after(async () => { await server.close() })

    it('never answers 5xx, and every error carries the Error body', async () => {
      await fc.assert(fc.asyncProperty(request, async (sent) => {
        const received = await send(server.origin, sent)
        assert.ok(received.status < 500, `${received.status}: ${received.body}`)
        if (received.status >= 400 && sent.method !== 'HEAD') {
          assert.match(received.contentType, /^application\/json/)
          const body = JSON.parse(received.body) as Record<string, unknown>
          assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status'])
          assert.equal(body.status, received.status)
          assert.doesNotMatch(received.body, /\bat .+\.(ts|js):\d+|node_modules|SELECT |INSERT /)
        }
      }), { numRuns: RUNS, seed: SEED, endOnFailure: true })
    })

    it('still serves normal requests afterwards, and logged no internal error', async () => {
      assert.equal((await fetch(`${server.origin}/healthz`)).status, 200)
      assert.equal((await fetch(`${server.origin}/readyz`)).status, 200)
      assert.equal((await post(server, '/pets', { name: 'After the storm', categoryId: 1 })).status, 201)
      const internal = server.logs().filter((line) => (line.level as number) >= 50)
      assert.deepEqual(internal, [])
    })
  })
}
