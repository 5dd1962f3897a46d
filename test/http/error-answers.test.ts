/**
 * Every error answer, byte for byte: one request per code of the catalogue and per protocol
 * rejection, compared with test/fixtures/error-answers.json (status, the headers a client
 * reads, body). `RECORD_ERROR_ANSWERS=1` writes the fixture anew, for a change of an answer
 * that is meant.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { StoreUnavailable } from '../../src/store/store-errors.js'
import { ROOT, TEST_KEY } from '../support/constants.js'
import { openRaw, rawRequest, startHalfSentCreate, type RawResponse } from '../support/raw-http.js'
import { startTestServer, type TestServer } from '../support/helper.js'

const FIXTURE = join(ROOT, 'test/fixtures/error-answers.json')
// What changes from run to run: the date, the port, a request id the server made, the seconds left of a
// window, a cursor's signature (by the database's own secret).
const VOLATILE = new Set(['date', 'keep-alive'])

interface Answer { name: string, status: number, headers: Record<string, string>, body: string }

function normalized (name: string, response: RawResponse, origin: string): Answer {
  const scrub = (text: string): string => text
    .replaceAll(origin.replace('http://', ''), 'HOST')
    .replace(/\bt=\d+/g, 't=N')
    .replace(/(cursor=[\w-]+)\.[\w-]+/g, '$1.SIGNATURE')
    .replace(/retry in \d+ s/g, 'retry in N s')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID')
  const headers: Record<string, string> = {}
  for (const key of Object.keys(response.headers).sort()) {
    if (VOLATILE.has(key)) continue
    headers[key] = key === 'retry-after' && response.status === 429 ? 'N' : scrub(response.headers[key]!)
  }
  return { name, status: response.status, headers, body: scrub(response.body) }
}

const auth = `Authorization: Bearer ${TEST_KEY}\r\n`
const host = 'Host: api.test\r\n'

function request (method: string, target: string, { id, headers = auth, body }: { id: string, headers?: string, body?: string }): string {
  const length = body === undefined ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`
  return `${method} ${target} HTTP/1.1\r\n${host}X-Request-Id: ${id}\r\n${headers}${length}Connection: close\r\n\r\n${body ?? ''}`
}

const json = (body: string, extra = ''): { headers: string, body: string } =>
  ({ headers: `${auth}Content-Type: application/json\r\n${extra}`, body })

/** Requests answered by the main server, in order: each a name and the raw request. */
const REQUESTS: Array<[string, string | Buffer]> = [
  ['malformed_json: not JSON', request('POST', '/v1/pets', { id: 'a1', ...json('{"name":') })],
  ['malformed_json: empty body', request('POST', '/v1/pets', { id: 'a2', ...json('') })],
  ['malformed_json: not UTF-8', Buffer.from(`POST /v1/pets HTTP/1.1\r\n${host}X-Request-Id: a3\r\n${auth}Content-Type: application/json\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{"name":"\xff"}`, 'latin1')],
  ['malformed_json: nested too deeply', request('POST', '/v1/pets', { id: 'a4', ...json('['.repeat(5000)) })],
  ['validation_failed: limit=0', request('GET', '/v1/pets?limit=0', { id: 'a5' })],
  ['validation_failed: limit given twice', request('GET', '/v1/pets?limit=1&limit=2', { id: 'a6' })],
  ['validation_failed: an unknown field', request('POST', '/v1/pets', { id: 'a7', ...json('{"name":"Rex","categoryID":1}') })],
  ['validation_failed: an id in the body', request('POST', '/v1/pets', { id: 'a8', ...json('{"id":1,"name":"Rex","categoryId":1}') })],
  ['validation_failed: a missing field', request('POST', '/v1/pets', { id: 'a9', ...json('{"name":"Rex"}') })],
  ['validation_failed: a null body', request('POST', '/v1/pets', { id: 'a10', ...json('null') })],
  ['validation_failed: petId not digits', request('GET', '/v1/pets/abc', { id: 'a11' })],
  ['validation_failed: a tampered cursor', request('GET', '/v1/pets?cursor=abc.def', { id: 'a12' })],
  ['validation_failed: Idempotency-Key too long', request('POST', '/v1/pets', { id: 'a13', ...json('{"name":"Rex","categoryId":1}', `Idempotency-Key: ${'k'.repeat(256)}\r\n`) })],
  ['validation_failed: Host sent twice', request('GET', '/v1/pets', { id: 'a14', headers: `${auth}${host}` })],
  ['validation_failed: no Host', `GET /v1/pets HTTP/1.1\r\nX-Request-Id: a15\r\n${auth}Connection: close\r\n\r\n`],
  ['validation_failed: a malformed request line', 'GARBAGE\r\n\r\n'],
  ['validation_failed: bad percent-encoding', request('GET', '/v1/pets/%zz', { id: 'a16' })],
  ['unauthorized: no key', request('GET', '/v1/pets', { id: 'a17', headers: '' })],
  ['unauthorized: a wrong key', request('GET', '/v1/pets', { id: 'a18', headers: 'Authorization: Bearer wrong-key-0123456789abcdef\r\n' })],
  ['unauthorized: an unknown route without a key', request('GET', '/v1/nothing', { id: 'a19', headers: '' })],
  ['not_found: no such animal', request('GET', '/v1/pets/424242', { id: 'a20' })],
  ['not_found: no such route', request('POST', '/v1/nothing', { id: 'a21' })],
  ['method_not_allowed: DELETE /v1/pets', request('DELETE', '/v1/pets', { id: 'a22' })],
  ['method_not_allowed: PUT /v1/pets/1', request('PUT', '/v1/pets/1', { id: 'a23' })],
  ['method_not_allowed: CONNECT', `CONNECT api.test:443 HTTP/1.1\r\n${host}\r\n`],
  ['payload_too_large: a body over 16 KiB', request('POST', '/v1/pets', { id: 'a24', ...json(`{"name":"${'x'.repeat(17_000)}","categoryId":1}`) })],
  ['uri_too_long: a target over 8 KiB', request('GET', `/v1/pets?x=${'a'.repeat(9_000)}`, { id: 'a25' })],
  ['uri_too_long: a request line past the header limit', request('GET', `/v1/pets?x=${'a'.repeat(17_000)}`, { id: 'a26' })],
  ['unsupported_media_type: text/plain', request('POST', '/v1/pets', { id: 'a27', headers: `${auth}Content-Type: text/plain\r\n`, body: 'Rex' })],
  ['unsupported_media_type: gzip', request('POST', '/v1/pets', { id: 'a28', ...json('{}', 'Content-Encoding: gzip\r\n') })],
  ['unsupported_media_type: latin1', request('POST', '/v1/pets', { id: 'a29', headers: `${auth}Content-Type: application/json; charset=latin1\r\n`, body: '{}' })],
  ['headers_too_large: headers over 16 KiB', request('GET', '/v1/pets', { id: 'a30', headers: `${auth}X-Big: ${'b'.repeat(17_000)}\r\n` })],
  ['internal_error: a fault of the store', request('GET', '/v1/pets/999', { id: 'a31' })],
  ['unavailable: the store unavailable', request('GET', '/v1/pets/998', { id: 'a32' })]
]

describe('error answers, byte for byte', () => {
  let server: TestServer
  let limited: TestServer
  let sunset: TestServer
  const answers: Answer[] = []

  before(async () => {
    server = await startTestServer({ timeouts: { headersMs: 1_000, requestMs: 2_000 } })
    limited = await startTestServer({ env: { RATE_LIMIT: '2' } })
    sunset = await startTestServer({ env: { GETPET_SUNSET: '2026-01-01T00:00:00Z' } })
    // Faults no real store makes on demand: a bug (500) and an outage (503).
    const findPet = server.store.findPet.bind(server.store)
    server.store.findPet = async (id) => {
      if (id === 999) throw new Error('a fault of the store')
      if (id === 998) throw new StoreUnavailable(undefined, { cause: new Error('connect ECONNREFUSED') })
      return await findPet(id)
    }
    await recordAnswers()
  })
  after(async () => {
    await server.close()
    await limited.close()
    await sunset.close()
  })

  /** One answer of each: both tests below read them. */
  async function recordAnswers (): Promise<void> {
    const record = async (name: string, target: TestServer, response: RawResponse | Promise<RawResponse>): Promise<void> => {
      answers.push(normalized(name, await response, target.origin))
    }
    for (const [name, text] of REQUESTS) await record(name, server, rawRequest(server.origin, text))

    // A cursor of one status filter sent with another.
    for (const pet of ['{"name":"Rex","categoryId":1}', '{"name":"Tom","categoryId":2}']) {
      await rawRequest(server.origin, request('POST', '/v1/pets', { id: 'setup', ...json(pet) }))
    }
    const first = await rawRequest(server.origin, request('GET', '/v1/pets?limit=1', { id: 'a33' }))
    await record('200: a first page with its next link', server, first)
    const cursor = /cursor=([^&>]+)/.exec(first.headers.link ?? '')![1]!
    await record('validation_failed: a cursor of another status', server, rawRequest(server.origin, request('GET', `/v1/pets?limit=1&status=sold&cursor=${cursor}`, { id: 'a34' })))

    // The same Idempotency-Key with another body, and while its first request is in flight.
    const keyed = (key: string, body: string, id: string): string => request('POST', '/v1/pets', { id, ...json(body, `Idempotency-Key: ${key}\r\n`) })
    await record('201: a create with an Idempotency-Key', server, rawRequest(server.origin, keyed('k1', '{"name":"Ivy","categoryId":3}', 'a35')))
    await record('idempotency_key_reused', server, rawRequest(server.origin, keyed('k1', '{"name":"Ivy","categoryId":4}', 'a36')))
    const body = '{"name":"Slow","categoryId":5}'
    const slow = await startHalfSentCreate(server.origin, body, 'k2')
    await record('idempotency_conflict', server, rawRequest(server.origin, keyed('k2', body, 'a37')))
    await slow.finish()

    // A client that never finishes its headers.
    const stalled = await openRaw(server.origin)
    stalled.write(`GET /v1/pets HTTP/1.1\r\n${host}`)
    await record('request_timeout', server, stalled.response)

    await record('gone: getPet after its sunset', sunset, rawRequest(sunset.origin, request('GET', '/v1/pets/1', { id: 'a38' })))

    for (const id of ['a39', 'a40']) await rawRequest(limited.origin, request('GET', '/v1/pets', { id }))
    await record('rate_limited: the per-key limit', limited, rawRequest(limited.origin, request('GET', '/v1/pets', { id: 'a41' })))
    for (let i = 0; i < 20; i++) await rawRequest(sunset.origin, request('GET', '/v1/pets', { id: 'f', headers: `Authorization: Bearer forged-key-${String(i).padStart(12, '0')}\r\n` }))
    await record('rate_limited: forged keys from one address', sunset, rawRequest(sunset.origin, request('GET', '/v1/pets', { id: 'a42', headers: 'Authorization: Bearer forged-key-999999999999\r\n' })))

    // A key without the operation's scope, for each operation.
    const reader = await issueApiKey(server.store, { name: 'reader', scopes: ['pets:read'] })
    const writer = await issueApiKey(server.store, { name: 'writer', scopes: ['pets:write'] })
    const bearer = (key: string): string => `Authorization: Bearer ${key}\r\n`
    await record('insufficient_scope: listPets with a pets:write key', server, rawRequest(server.origin, request('GET', '/v1/pets', { id: 'a44', headers: bearer(writer) })))
    await record('insufficient_scope: getPet with a pets:write key', server, rawRequest(server.origin, request('GET', '/v1/pets/1', { id: 'a45', headers: bearer(writer) })))
    await record('insufficient_scope: createPet with a pets:read key', server, rawRequest(server.origin,
      request('POST', '/v1/pets', { id: 'a46', headers: `${bearer(reader)}Content-Type: application/json\r\n`, body: '{"name":"Rex","categoryId":1}' })))

    server.app.startDraining()
    await record('unavailable: readyz while draining', server, rawRequest(server.origin, request('GET', '/readyz', { id: 'a43', headers: '' })))

    if (process.env.RECORD_ERROR_ANSWERS === '1') writeFileSync(FIXTURE, `${JSON.stringify(answers, null, 2)}\n`)
  }

  it('answers every catalogue code and protocol rejection as recorded', () => {
    const recorded = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Answer[]
    assert.deepEqual(answers.map((answer) => answer.name), recorded.map((answer) => answer.name))
    for (const [i, answer] of answers.entries()) assert.deepEqual(answer, recorded[i], answer.name)
  })

  it('shows as each documented example a message the service answers with, numbers aside', async () => {
    const document = await (await fetch(`${server.origin}/v1/openapi.json`)).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { example?: { code?: string, message: string } }> }> }>>
    }
    const numbers = (message: string): string => message.replace(/[0-9]+/g, 'N')
    const answered = new Set(answers.filter((answer) => answer.status >= 400).map((answer) => {
      const { code, message } = JSON.parse(answer.body) as { code: string, message: string }
      return `${code} ${numbers(message)}`
    }))
    let compared = 0
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, { responses }] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(responses)) {
          const example = response.content?.['application/json']?.example
          if (example?.code === undefined) continue
          assert.ok(answered.has(`${example.code} ${numbers(example.message)}`), `${method} ${path} ${status}: no answer says "${example.message}"`)
          compared++
        }
      }
    }
    assert.equal(compared, 36)
  })
})
