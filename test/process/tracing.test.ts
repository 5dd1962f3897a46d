import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseTracing } from '../../src/config.js'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, JSON_AUTH, backends, createTestDatabase, type TestDatabase } from '../support/helper.js'
import { nextLink } from '../support/list-pages.js'
import { startServerProcess, type ServerProcess } from '../support/process.js'

interface OtlpValue { stringValue?: string, intValue?: string | number, boolValue?: boolean }
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Array<{ key: string, value: OtlpValue }>
}
const SERVER = 2
const CLIENT = 3

/** A local OTLP/HTTP endpoint that keeps every export it receives, as JSON text. */
class OtlpReceiver {
  readonly bodies: string[] = []
  #server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      this.bodies.push(Buffer.concat(chunks).toString())
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })

  async start (): Promise<string> {
    this.#server.listen(0, '127.0.0.1')
    await once(this.#server, 'listening')
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  async close (): Promise<void> {
    await new Promise((resolve) => this.#server.close(resolve))
  }

  spans (): OtlpSpan[] {
    return this.bodies.flatMap((body) => (JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> })
      .resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)))
  }
}

function attribute (span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((entry) => entry.key === key)?.value
  if (value === undefined) return undefined
  return value.stringValue ?? (value.intValue === undefined ? value.boolValue : Number(value.intValue))
}

/** A caller's span: its W3C `traceparent`, sampled. */
function callerSpan (): { traceId: string, spanId: string, traceparent: string } {
  const traceId = randomBytes(16).toString('hex')
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

const OTEL_ON = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100', LOG_LEVEL: 'info' }
/** A POST whose body comes 100 ms after its headers, once the hooks have run: as a slow client sends it. */
async function postSlowly (url: string, body: string, headers: Record<string, string>): Promise<{ status: number, body: string }> {
  const request = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } })
  request.flushHeaders()
  await sleep(100)
  request.end(body)
  const [response] = await once(request, 'response') as [IncomingMessage]
  let text = ''
  for await (const chunk of response) text += String(chunk)
  return { status: response.statusCode!, body: text }
}

async function stop (server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM')
  assert.equal(await server.exited, 0, server.output())
}

function requestLines (server: ServerProcess): Array<Record<string, unknown>> {
  return server.output().split('\n').filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'request')
}

for (const backend of backends('sqlite', 'postgres')) {
  describe(`${backend.name}: traces exported over OTLP/HTTP`, { skip: backend.skip }, () => {
    const receiver = new OtlpReceiver()
    let database: TestDatabase
    let server: ServerProcess
    const create = callerSpan()
    const page = callerSpan()
    const fetchOne = callerSpan()
    const lost = callerSpan()
    const forgedKey = `ps_${randomBytes(32).toString('base64url')}`
    let cursor = ''
    let petId = 0

    before(async () => {
      database = await createTestDatabase(backend.name)
      server = await startServerProcess(database.url, { ...OTEL_ON, OTEL_EXPORTER_OTLP_ENDPOINT: await receiver.start() })
      const created = await postSlowly(`${server.origin}/v1/pets`, JSON.stringify({ name: 'Rex', categoryId: 1 }), { ...AUTH, traceparent: create.traceparent })
      assert.equal(created.status, 201)
      petId = (JSON.parse(created.body) as { id: number }).id
      await fetch(`${server.origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: '{"name":"Tom","categoryId":1}' })
      const first = await fetch(`${server.origin}/v1/pets?limit=1`, { headers: AUTH })
      cursor = new URL(nextLink(first)!).searchParams.get('cursor')!
      const next = await fetch(`${server.origin}/v1/pets?limit=1&cursor=${encodeURIComponent(cursor)}`, { headers: { ...AUTH, traceparent: page.traceparent } })
      assert.equal(next.status, 200)
      assert.equal((await fetch(`${server.origin}/v1/pets/${petId}`, { headers: { ...AUTH, traceparent: fetchOne.traceparent } })).status, 200)
      assert.equal((await fetch(`${server.origin}/v1/pets`, { headers: { authorization: `Bearer ${forgedKey}` } })).status, 401)
      // A key pasted where it does not belong: in the path of a route, and of no route, and in the query.
      assert.equal((await fetch(`${server.origin}/v1/pets/${forgedKey}`, { headers: AUTH })).status, 400)
      assert.equal((await fetch(`${server.origin}/v1/${forgedKey}?key=${forgedKey}`, { headers: { ...AUTH, traceparent: lost.traceparent } })).status, 404)
      // The pending spans are exported on the way out.
      await stop(server)
    })
    after(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL')
      await receiver.close()
      await database.drop()
    })

    const serverSpanOf = (caller: { traceId: string }): OtlpSpan => {
      const spans = receiver.spans().filter((span) => span.traceId === caller.traceId && span.kind === SERVER)
      assert.equal(spans.length, 1, `server spans of trace ${caller.traceId}: ${JSON.stringify(spans)}`)
      return spans[0]!
    }

    it('continues the caller\'s traceparent with a server span named by route, with status and operation', () => {
      const span = serverSpanOf(create)
      assert.equal(span.name, 'POST /v1/pets')
      assert.equal(span.parentSpanId, create.spanId)
      assert.equal(attribute(span, 'http.response.status_code'), 201)
      assert.equal(attribute(span, 'petstore.operation'), 'createPet')
      const one = serverSpanOf(fetchOne)
      assert.equal(one.name, 'GET /v1/pets/{petId}')
      assert.equal(one.parentSpanId, fetchOne.spanId)
      assert.equal(attribute(one, 'http.route'), '/v1/pets/:petId')
      assert.equal(attribute(one, 'petstore.operation'), 'getPet')
    })

    it('makes a child span of the server span for each store call, on this database', () => {
      const system = backend.name === 'sqlite' ? 'sqlite' : 'postgresql'
      for (const [caller, operation] of [[create, 'createPet'], [page, 'listPets'], [fetchOne, 'findPet']] as const) {
        const parent = serverSpanOf(caller)
        const children = receiver.spans().filter((span) => span.parentSpanId === parent.spanId)
        assert.deepEqual(children.map((span) => span.name), [operation], `children of ${parent.name}`)
        const [child] = children
        assert.equal(child!.traceId, caller.traceId)
        assert.equal(child!.kind, CLIENT)
        assert.equal(attribute(child!, 'db.system.name'), system)
        assert.equal(attribute(child!, 'db.operation.name'), operation)
      }
      // Authentication looks up the forged key, within its request's span.
      const lookups = receiver.spans().filter((span) => span.name === 'findApiKeyByHash')
      assert.equal(lookups.length, 1)
      const refused = receiver.spans().find((span) => span.spanId === lookups[0]!.parentSpanId)
      assert.equal(refused?.name, 'GET /v1/pets')
      assert.equal(attribute(refused, 'http.response.status_code'), 401)
    })

    it('puts no key, key hash, cursor or Authorization value in any span', () => {
      const exported = receiver.bodies.join('\n')
      const forgedHash = createHash('sha256').update(forgedKey).digest('hex')
      for (const secret of [TEST_KEY, forgedKey, forgedHash, cursor, encodeURIComponent(cursor), 'Bearer']) {
        assert.ok(!exported.includes(secret), `the export holds ${secret}`)
      }
      const headers = receiver.spans().flatMap((span) => span.attributes.map((entry) => entry.key)).filter((key) => /header|authorization/i.test(key))
      assert.deepEqual(headers, [], 'no header is recorded')
      assert.equal(attribute(serverSpanOf(page), 'url.path'), '/v1/pets')
      const unrouted = serverSpanOf(lost)
      assert.equal(unrouted.name, 'GET')
      assert.equal(attribute(unrouted, 'url.path'), '(no route)')
      assert.equal(attribute(unrouted, 'http.response.status_code'), 404)
    })

    it('writes the trace id into the request\'s log line', () => {
      const line = requestLines(server).find((entry) => entry.route === '/v1/pets' && entry.method === 'POST' && entry.status === 201 && entry.trace_id === create.traceId)
      assert.ok(line, server.output())
      assert.equal(line.span_id, serverSpanOf(create).spanId)
    })
  })
}

describe('a collector that is down', () => {
  it('costs a warning a failed export, and no request nor the clean exit', async () => {
    const database = await createTestDatabase('sqlite')
    try {
      const closed = new OtlpReceiver()
      const endpoint = await closed.start()
      await closed.close()
      const server = await startServerProcess(database.url, { ...OTEL_ON, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: '500' })
      assert.equal((await fetch(`${server.origin}/v1/pets`, { headers: AUTH })).status, 200)
      await stop(server)
      assert.match(server.output(), /"level":40,[^\n]*"msg":"traces: /)
    } finally {
      await database.drop()
    }
  })
})

describe('traces left off', () => {
  const receiver = new OtlpReceiver()
  let endpoint: string
  let database: TestDatabase
  before(async () => {
    endpoint = await receiver.start()
    database = await createTestDatabase('sqlite')
  })
  after(async () => {
    await receiver.close()
    await database.drop()
  })

  for (const [story, env] of [
    ['exports nothing with OTEL_TRACES_SAMPLER=always_off', { OTEL_TRACES_SAMPLER: 'always_off' }],
    ['exports nothing, and logs no trace id, with OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true' }]
  ] as const) {
    it(story, async () => {
      const server = await startServerProcess(database.url, { ...OTEL_ON, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env })
      const caller = callerSpan()
      assert.equal((await fetch(`${server.origin}/v1/pets`, { headers: { ...AUTH, traceparent: caller.traceparent } })).status, 200)
      await stop(server)
      assert.deepEqual(receiver.spans(), [])
      const [line] = requestLines(server).filter((entry) => entry.route === '/v1/pets')
      assert.ok(line, server.output())
      if ('OTEL_SDK_DISABLED' in env) assert.equal(line.trace_id, undefined)
    })
  }

  it('is off unless an endpoint or OTEL_TRACES_EXPORTER=otlp asks for it', () => {
    assert.equal(parseTracing({}), undefined)
    assert.equal(parseTracing({ OTEL_SERVICE_NAME: 'petstore', OTEL_TRACES_SAMPLER: 'always_on' }), undefined)
    assert.equal(parseTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }), undefined)
    assert.deepEqual(parseTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { protocol: 'http/protobuf' })
    assert.deepEqual(parseTracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), { protocol: 'http/json' })
    assert.deepEqual(parseTracing({ OTEL_TRACES_EXPORTER: 'otlp' }), { protocol: 'http/protobuf' })
  })

  it('leaves the values of the SDK\'s own variables to the SDK: no start-up error', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    assert.deepEqual(parseTracing({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), { protocol: 'grpc' })
    assert.deepEqual(parseTracing({ ...on, OTEL_TRACES_SAMPLER: 'always-on', OTEL_TRACES_SAMPLER_ARG: '2' }), { protocol: 'http/protobuf' })
    assert.deepEqual(parseTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), { protocol: 'http/protobuf' })
    assert.equal(parseTracing({ OTEL_TRACES_EXPORTER: 'zipkin' }), undefined)
  })
})
