import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { backends, errorBody, get, post, type TestServer } from '../support/helper.js'
import { rawRequest } from '../support/raw-http.js'
import { startBreakableServer, type BreakableServer } from '../support/unreadable-database.js'

interface Sample { name: string, labels: Record<string, string>, value: number }

/** Parses the Prometheus text format into samples. */
function parseMetrics (text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) continue
    const labels: Record<string, string> = {}
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return samples
}

/** The value of the one sample with this name and these labels (0 when absent). */
function valueOf (samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name &&
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value) &&
    Object.keys(sample.labels).length === Object.keys(labels).length)
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} is one sample`)
  return found[0]?.value ?? 0
}

for (const backend of backends()) {
  describe(`${backend.name}: GET /metrics on the metrics listener after traffic`, { skip: backend.skip }, () => {
    let breakable: BreakableServer
    let server: TestServer
    let samples: Sample[]
    let onTheApiPort: Response
    before(async () => {
      breakable = await startBreakableServer(backend.name)
      server = breakable.server
      const ops = await issueApiKey(server.store, { name: 'ops' })
      for (let i = 0; i < 3; i++) assert.equal((await post(server, '/pets', { name: `m${i}`, categoryId: 1 })).status, 201)
      for (let i = 0; i < 4; i++) assert.equal((await get(server, '/pets')).status, 200)
      assert.equal((await get(server, '/pets?limit=0')).status, 400)
      assert.equal((await get(server, '/pets/1')).status, 200)
      assert.equal((await get(server, '/pets/999')).status, 404)
      for (let i = 0; i < 3; i++) assert.equal((await get(server, '/pets/1', { authorization: `Bearer ${ops}` })).status, 200)
      assert.equal((await fetch(`${server.api}/pets/1`)).status, 401)
      assert.equal((await get(server, '/nowhere')).status, 404)
      await breakable.cutDatabase()
      for (let i = 0; i < 2; i++) assert.equal((await get(server, '/pets')).status, 503)
      assert.equal((await fetch(`${server.origin}/readyz`)).status, 503)
      assert.equal((await fetch(`${server.origin}/readyz/process`)).status, 200)
      server.app.startDraining()
      assert.equal((await fetch(`${server.origin}/readyz/process`)).status, 503)
      const response = await fetch(`${server.metrics.origin}/metrics`)
      assert.equal(response.status, 200)
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/)
      samples = parseMetrics(await response.text())
      onTheApiPort = await fetch(`${server.origin}/metrics`)
    })
    after(async () => { await breakable.close() })

    it('counts requests by operation and status', () => {
      const requests = 'petstore_http_requests_total'
      assert.equal(valueOf(samples, requests, { operation: 'createPet', status: '201' }), 3)
      assert.equal(valueOf(samples, requests, { operation: 'listPets', status: '200' }), 4)
      assert.equal(valueOf(samples, requests, { operation: 'listPets', status: '400' }), 1)
      assert.equal(valueOf(samples, requests, { operation: 'listPets', status: '503' }), 2)
      assert.equal(valueOf(samples, requests, { operation: 'getPet', status: '200' }), 4)
      assert.equal(valueOf(samples, requests, { operation: 'getPet', status: '404' }), 1)
      assert.equal(valueOf(samples, requests, { operation: 'getPet', status: '401' }), 1)
      assert.equal(valueOf(samples, requests, { operation: 'unmatched', status: '404' }), 1)
      assert.equal(valueOf(samples, requests, { operation: 'readyz', status: '503' }), 1)
      assert.equal(valueOf(samples, requests, { operation: 'readyzProcess', status: '200' }), 1)
      assert.equal(valueOf(samples, requests, { operation: 'readyzProcess', status: '503' }), 1)
    })

    it('records every request in the latency histogram', () => {
      const histogram = 'petstore_http_request_duration_seconds'
      assert.equal(valueOf(samples, `${histogram}_count`, { operation: 'listPets' }), 7)
      assert.equal(valueOf(samples, `${histogram}_bucket`, { operation: 'listPets', le: '+Inf' }), 7)
      assert.equal(valueOf(samples, `${histogram}_count`, { operation: 'createPet' }), 3)
      assert.ok(valueOf(samples, `${histogram}_sum`, { operation: 'createPet' }) > 0)
      const buckets = samples.filter((s) => s.name === `${histogram}_bucket` && s.labels.operation === 'getPet').map((s) => s.value)
      assert.deepEqual(buckets, [...buckets].sort((a, b) => a - b), 'buckets are cumulative')
    })

    it('counts getPet calls per API key name, authenticated calls only', () => {
      assert.equal(valueOf(samples, 'petstore_deprecated_calls_total', { operation: 'getPet', key: 'env-1' }), 2)
      assert.equal(valueOf(samples, 'petstore_deprecated_calls_total', { operation: 'getPet', key: 'ops' }), 3)
      assert.equal(samples.filter((s) => s.name === 'petstore_deprecated_calls_total').length, 2)
    })

    it('counts the requests the store failed, apart from readiness probes', () => {
      assert.equal(valueOf(samples, 'petstore_store_errors_total'), 2)
    })

    it('exposes the process metrics', () => {
      assert.ok(valueOf(samples, 'petstore_process_resident_memory_bytes') > 0)
    })

    it('answers /metrics on the API port 404 not_found, as any unknown path, naming no key', async () => {
      assert.equal(onTheApiPort.status, 404)
      const body = await errorBody(onTheApiPort)
      assert.equal(body.code, 'not_found')
      assert.doesNotMatch(JSON.stringify(body), /ops|env-1|petstore_/)
    })

    it('answers HEAD as GET without the body, another method 405 and another path 404 on the metrics listener', async () => {
      const head = await rawRequest(server.metrics.origin, 'HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.equal(head.status, 200)
      assert.match(head.headers['content-type'] ?? '', /^text\/plain/)
      assert.equal(head.body, '')
      const post = await fetch(`${server.metrics.origin}/metrics`, { method: 'POST' })
      assert.equal(post.status, 405)
      assert.equal(post.headers.get('allow'), 'GET, HEAD')
      for (const path of ['/', '/healthz', '/v1/pets', '/metrics/x']) assert.equal((await fetch(`${server.metrics.origin}${path}`)).status, 404, path)
    })
  })
}
