import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'
import { query } from '../support/database.js'
import { rawRequest } from '../support/raw-http.js'

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

// What must never reach a client: a stack frame, a file path, SQL, a driver's words.
const LEAKS = /\bat [\w.<>]+ \(|\/work\/|node_modules|\.ts:\d+|\.js:\d+|SELECT|INSERT|DELETE FROM|\bFROM pets\b|SQLITE|sqlite3|pg-pool|relation "|no such table|TypeError|stack/i

/** Sends every operation, and every way a client may misplace its key, with `key`. */
async function exerciseEverything (server: TestServer, key: string): Promise<void> {
  const bearer = { authorization: `Bearer ${key}` }
  const json = { ...bearer, 'content-type': 'application/json' }
  const calls: Array<[string, RequestInit]> = [
    ['/v1/pets', { headers: bearer }],
    ['/v1/pets?limit=1', { headers: bearer }],
    ['/v1/pets', { method: 'POST', headers: json, body: JSON.stringify({ name: 'Logged?', categoryId: 1 }) }],
    ['/v1/pets', { method: 'POST', headers: { ...json, 'idempotency-key': 'log-1' }, body: JSON.stringify({ name: 'Keyed', categoryId: 1 }) }],
    ['/v1/pets', { method: 'POST', headers: json, body: '{"broken' }],
    ['/v1/pets/1', { headers: bearer }],
    ['/v1/pets/999999', { headers: bearer }],
    ['/v1/pets/abc', { headers: bearer }],
    ['/v1/pets/1', { method: 'DELETE', headers: bearer }],
    ['/v1/nowhere', { headers: bearer }],
    ['/v1/openapi.json', {}],
    ['/docs', {}],
    ['/healthz', {}],
    ['/readyz', {}],
    ['/readyz/process', {}],
    // Misplaced: in the query, a cookie, other headers, the wrong scheme, the path, the body.
    [`/v1/pets?api_key=${key}&access_token=${key}`, { headers: bearer }],
    [`/v1/pets?api_key=${key}`, {}],
    ['/v1/pets', { headers: { cookie: `session=${key}; token=${key}` } }],
    ['/v1/pets', { headers: { 'x-api-key': key, 'api-key': key } }],
    ['/v1/pets', { headers: { ...bearer, 'x-request-id': key } }],
    ['/healthz', { headers: { 'x-request-id': key } }],
    ['/v1/pets', { headers: { authorization: `Basic ${key}` } }],
    ['/v1/pets', { headers: { authorization: `Token ${key}` } }],
    ['/v1/pets', { headers: { authorization: key } }],
    ['/v1/pets', { headers: { authorization: `Bearer ${key}x` } }],
    [`/v1/pets/${key}`, { headers: bearer }],
    [`/v1/${key}`, {}],
    ['/v1/pets', { method: 'POST', headers: json, body: JSON.stringify({ name: 'a', categoryId: 1, apiKey: key }) }],
    ['/v1/pets', { method: 'POST', headers: { ...json, 'idempotency-key': `${key} x` }, body: JSON.stringify({ name: 'a', categoryId: 1 }) }]
  ]
  for (const [path, init] of calls) await (await fetch(`${server.origin}${path}`, init)).arrayBuffer()
  // The key in a request Node's parser rejects, and in an over-long target.
  await rawRequest(server.origin, `GET /v1/pets?k=${key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nBroken\r\n\r\n`)
  await rawRequest(server.origin, `GET /v1/pets?k=${key}${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`)
}

for (const backend of backends()) {
  describe(`${backend.name}: credentials`, { skip: backend.skip }, () => {
    let server: TestServer
    let issued: string
    // Issued before keys had a prefix and a checksum, and one of the new shape with a wrong checksum.
    const legacy = `ps_${randomBytes(32).toString('base64url')}`
    let forged: string
    before(async () => {
      server = await startTestServer({ backend: backend.name, env: { LOG_LEVEL: 'trace' } })
      issued = await issueApiKey(server.store, { name: 'ops' })
      forged = `${issued.slice(0, -1)}${issued.endsWith('A') ? 'B' : 'A'}`
    })
    after(async () => { await server.close() })

    it('stores issued keys only as SHA-256 hashes, and configured keys not at all', async () => {
      const rows = (await query(server.database.url, 'SELECT * FROM api_keys')).filter((row) => row.name === 'ops')
      assert.equal(rows.length, 1)
      assert.equal(rows[0]!.key_hash, sha256(issued))
      const table = JSON.stringify(rows)
      assert.ok(!table.includes(issued), 'the issued key is not in the table')
      assert.ok(!table.includes(TEST_KEY), 'the configured key is not in the table')
      assert.equal((await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${issued}` } })).status, 200, 'the issued key works')
    })

    it('never writes a key to the log, whatever the operation and wherever the client put it, in either format', async () => {
      await server.store.insertApiKey({ name: 'legacy', keyHash: sha256(legacy), scopes: ['pets:read', 'pets:write'], createdAt: new Date(), expiresAt: null, lifetimeSeconds: null, rateLimit: null })
      for (const key of [TEST_KEY, issued, legacy, forged]) await exerciseEverything(server, key)
      const lines = server.logText().split('\n')
      assert.ok(lines.length > 50, `the log was captured (${lines.length} lines)`)
      for (const key of [TEST_KEY, issued, encodeURIComponent(issued), legacy, forged]) {
        const leaking = lines.filter((line) => line.includes(key))
        assert.deepEqual(leaking, [], `a log line holds the key ${key.slice(0, 6)}…`)
      }
    })
  })

  describe(`${backend.name}: what a failure shows a client`, { skip: backend.skip }, () => {
    it('answers a lost table with the Error body, without SQL, stack or path', async () => {
      const server = await startTestServer({ backend: backend.name })
      try {
        await query(server.database.url, 'DROP TABLE idempotency_keys')
        await query(server.database.url, 'DROP TABLE pets')
        for (const response of [
          await fetch(`${server.api}/pets`, { headers: AUTH }),
          await fetch(`${server.api}/pets/1`, { headers: AUTH }),
          await fetch(`${server.api}/pets`, { method: 'POST', headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', 'idempotency-key': 'k' }, body: '{"name":"a","categoryId":1}' })
        ]) {
          assert.ok(response.status === 500 || response.status === 503, String(response.status))
          const text = await response.clone().text()
          assert.doesNotMatch(text, LEAKS)
          await errorBody(response)
        }
        const internal = server.logs().filter((line) => line.level === 50)
        assert.ok(internal.every((line) => typeof line.requestId === 'string'), 'each internal error is logged with its request id')
      } finally {
        await server.close()
      }
    })

    it('answers a closed store with 503 unavailable and Retry-After, without SQL, stack or path', async () => {
      const server = await startTestServer({ backend: backend.name })
      // A page served once is in the page cache: a closed store must not serve it again.
      assert.equal((await fetch(`${server.api}/pets`, { headers: AUTH })).status, 200)
      await server.store.close()
      try {
        for (const response of [
          await fetch(`${server.api}/pets`, { headers: AUTH }),
          await fetch(`${server.api}/pets/1`, { headers: AUTH }),
          await fetch(`${server.api}/pets`, { method: 'POST', headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, body: '{"name":"a","categoryId":1}' }),
          await fetch(`${server.origin}/readyz`)
        ]) {
          assert.equal(response.status, 503)
          assert.ok(Number(response.headers.get('retry-after')) >= 1)
          assert.doesNotMatch(await response.clone().text(), LEAKS)
          assert.equal((await errorBody(response)).code, 'unavailable')
        }
      } finally {
        await server.app.close()
        await server.metrics.close()
        await server.database.drop()
      }
    })
  })
}

describe('the docs page', () => {
  let server: TestServer
  before(async () => { server = await startTestServer() })
  after(async () => { await server.close() })

  for (const path of ['/docs', '/docs/']) {
    it(`serves ${path} with a CSP, nosniff and frame denial`, async () => {
      const response = await fetch(`${server.origin}${path}`)
      assert.equal(response.status, 200)
      const csp = response.headers.get('content-security-policy') ?? ''
      assert.match(csp, /default-src 'self'/)
      assert.match(csp, /object-src 'none'/)
      assert.match(csp, /frame-ancestors 'none'/)
      assert.match(csp, /script-src 'self'/)
      assert.doesNotMatch(csp, /script-src[^;]*'unsafe-inline'/)
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff')
      assert.equal(response.headers.get('x-frame-options'), 'DENY')
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer')
    })
  }

  it('loads no script or style from another origin', async () => {
    const html = await (await fetch(`${server.origin}/docs/`)).text()
    assert.doesNotMatch(html, /<(script|link)[^>]+(src|href)="(https?:)?\/\//)
  })
})
