import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, backends, errorBody, get, post, startTestServer, type TestServer } from '../support/helper.js'
import { openRaw, rawRequest, type RawResponse } from '../support/raw-http.js'

const AUTH_LINE = `Authorization: Bearer ${TEST_KEY}\r\n`

/** A raw POST /v1/pets with a JSON body sent as it is. */
function rawPost (body: string, extraHeaders = ''): string {
  return `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\n${extraHeaders}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
}

/** Asserts the spec's Error body on a raw response, and returns its code. */
function errorCodeOf (response: RawResponse, status: number): string {
  assert.equal(response.status, status, response.body)
  assert.match(response.headers['content-type'] ?? '', /^application\/json/)
  const body = JSON.parse(response.body) as Record<string, unknown>
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status'])
  assert.equal(body.status, status)
  return body.code as string
}

for (const backend of backends()) {
  describe(`${backend.name}: hostile input`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => {
    // After all of it the service still works.
      assert.equal((await post(server, '/pets', { name: 'Still here', categoryId: 1 })).status, 201)
      await server.close()
    })

    describe('bodies', () => {
      it('answers 413 payload_too_large for a body over 16 KiB', async () => {
        const response = await post(server, '/pets', { name: 'a'.repeat(17_000), categoryId: 1 })
        assert.equal(response.status, 413)
        assert.equal((await errorBody(response)).code, 'payload_too_large')
      })

      it('answers 413 for a chunked body over 16 KiB, sent without Content-Length', async () => {
        const chunk = 'x'.repeat(4096)
        const response = await rawRequest(server.origin,
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `${`1000\r\n${chunk}\r\n`.repeat(5)}0\r\n\r\n`)
        assert.equal(errorCodeOf(response, 413), 'payload_too_large')
      })

      it('answers 413 for a chunked body that never ends, without reading it all', async () => {
        const conn = await openRaw(server.origin)
        conn.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`)
        const chunk = `1000\r\n${'x'.repeat(4096)}\r\n`
        const pump = setInterval(() => { if (!conn.socket.destroyed) conn.write(chunk) }, 1)
        try {
          assert.equal(errorCodeOf(await conn.response, 413), 'payload_too_large')
        } finally {
          clearInterval(pump)
          conn.socket.destroy()
        }
      })

      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/json-patch+json']) {
        it(`answers 415 unsupported_media_type for Content-Type: ${type}`, async () => {
          const response = await post(server, '/pets', '{"name":"a","categoryId":1}', { 'content-type': type })
          assert.equal(response.status, 415)
          assert.equal((await errorBody(response)).code, 'unsupported_media_type')
        })
      }

      it('answers 415 for a body without Content-Type', async () => {
        const response = await rawRequest(server.origin, `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Length: 2\r\n\r\n{}`)
        assert.equal(errorCodeOf(response, 415), 'unsupported_media_type')
      })

      const malformed: Record<string, string> = {
        'truncated JSON': '{"name":"a",',
        'a trailing comma': '{"name":"a","categoryId":1,}',
        'single quotes': "{'name':'a','categoryId':1}",
        'a bare word': 'undefined',
        NaN: '{"name":"a","categoryId":NaN}',
        'a BOM-only body': '\ufeff',
        'deeply nested arrays': `${'['.repeat(5000)}${']'.repeat(5000)}`,
        'deeply nested objects': `${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`,
        'duplicate keys with different values': '{"name":"a","name":"b","categoryId":1}'
      }
      const invalid: Record<string, string> = {
        'a lone high surrogate': '{"name":"a\\ud800b","categoryId":1}',
        'a lone low surrogate': '{"name":"\\udc00","categoryId":1}',
        'a NUL byte': '{"name":"a\\u0000b","categoryId":1}',
        'a raw control character': '{"name":"a\\u0007","categoryId":1}',
        'a 400-digit number': `{"name":"a","categoryId":1${'0'.repeat(400)}}`,
        'an exponent overflowing to Infinity': '{"name":"a","categoryId":1e999}',
        'a negative huge number': `{"name":"a","categoryId":-${'9'.repeat(30)}}`,
        'a float that rounds to an integer': '{"name":"a","categoryId":1.0000000000000001}',
        'categoryId 2^63': '{"name":"a","categoryId":9223372036854775808}',
        '__proto__ as a key': '{"name":"a","categoryId":1,"__proto__":{"status":"sold"}}',
        'constructor as a key': '{"name":"a","categoryId":1,"constructor":{"prototype":{"polluted":true}}}',
        'prototype as a key': '{"name":"a","categoryId":1,"prototype":{}}',
        'an array body': '[{"name":"a","categoryId":1}]',
        'a string body': '"name"'
      }
      for (const [what, body] of [...Object.entries(malformed), ...Object.entries(invalid)]) {
        it(`answers 400 for ${what}`, async () => {
          const response = await post(server, '/pets', body)
          assert.equal(response.status, 400)
          assert.match((await errorBody(response)).code, /^(malformed_json|validation_failed)$/)
        })
      }

      for (const [what, bytes] of [['an encoded surrogate', [0xed, 0xa0, 0x80]], ['a stray continuation byte', [0x80]], ['0xFF', [0xff]], ['an overlong encoding', [0xc0, 0xae]], ['a truncated sequence', [0xe2, 0x82]]] as const) {
        it(`answers 400 malformed_json for invalid UTF-8 (${what}) instead of storing U+FFFD`, async () => {
          const body = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from(bytes), Buffer.from('b","categoryId":1}')])
          const response = await rawRequest(server.origin, Buffer.concat([
            Buffer.from(`POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`), body]))
          assert.equal(errorCodeOf(response, 400), 'malformed_json')
        })
      }

      it('takes a body with a UTF-8 BOM and multi-byte names as sent', async () => {
        const response = await post(server, '/pets', '\ufeff{"name":"Ünïcödé 🐕 名前","categoryId":1}')
        assert.equal(response.status, 201)
        assert.equal((await response.json() as { name: string }).name, 'Ünïcödé 🐕 名前')
      })

      it('leaves Object.prototype untouched by __proto__ and constructor keys', async () => {
        await post(server, '/pets', '{"__proto__":{"polluted":true},"name":"a","categoryId":1}')
        await post(server, '/pets', '{"constructor":{"prototype":{"polluted":true}},"name":"a","categoryId":1}')
        assert.equal(({} as Record<string, unknown>).polluted, undefined)
      })

      it('stores a categoryId of 2^63 - 1 exactly', async () => {
        const response = await post(server, '/pets', '{"name":"big","categoryId":9223372036854775807}')
        assert.equal(response.status, 201)
        assert.match(await response.text(), /"categoryId":9223372036854775807[,}]/)
      })
    })

    describe('headers and the request line', () => {
      it('answers 431 headers_too_large for headers over 16 KiB, with the Error body', async () => {
        const response = await rawRequest(server.origin, `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}X-Big: ${'a'.repeat(17_000)}\r\n\r\n`)
        assert.equal(errorCodeOf(response, 431), 'headers_too_large')
      })

      it('answers 431 for thousands of small headers', async () => {
        const many = Array.from({ length: 2000 }, (_, i) => `X-H${i}: v\r\n`).join('')
        const response = await rawRequest(server.origin, `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}${many}\r\n`)
        assert.equal(errorCodeOf(response, 431), 'headers_too_large')
      })

      for (const length of [9_000, 15_000, 40_000]) {
        it(`answers 414 uri_too_long for a ${length}-byte request target`, async () => {
          const response = await rawRequest(server.origin, `GET /v1/pets?q=${'a'.repeat(length)} HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}\r\n`)
          assert.equal(errorCodeOf(response, 414), 'uri_too_long')
        })
      }

      it('answers 414 for a long petId too, and takes a target of 8 KiB', async () => {
        const long = await get(server, `/pets/${'1'.repeat(9_000)}`)
        assert.equal(long.status, 414)
        assert.equal((await errorBody(long)).code, 'uri_too_long')
        const path = '/v1/pets?q='
        const fits = await fetch(`${server.origin}${path}${'a'.repeat(8192 - path.length)}`, { headers: AUTH })
        assert.equal(fits.status, 200)
      })

      // rawPost sends Content-Type once already; a doubled Authorization is a 401 (test/http/auth-first.test.ts).
      for (const [name, extra] of [['Content-Type', 'Content-Type: application/json\r\n'], ['Idempotency-Key', 'Idempotency-Key: k1\r\nIdempotency-Key: k2\r\n']]) {
        it(`answers 400 when ${name} is sent twice`, async () => {
          const response = await rawRequest(server.origin, rawPost('{"name":"a","categoryId":1}', extra))
          assert.equal(errorCodeOf(response, 400), 'validation_failed')
          assert.match(JSON.parse(response.body).message, new RegExp(`^${name!.toLowerCase()}: must be sent once`))
        })
      }

      it('answers CONNECT with 405, Allow and the Error body, not a dropped connection', async () => {
        const response = await rawRequest(server.origin, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n')
        assert.equal(errorCodeOf(response, 405), 'method_not_allowed')
        assert.equal(response.headers.allow, 'GET, HEAD, POST')
      })

      it('ignores an unknown Expect instead of a bare 417', async () => {
        const response = await rawRequest(server.origin, rawPost('{"name":"Expecting","categoryId":1}', 'Expect: something-else\r\n'))
        assert.equal(response.status, 201, response.body)
      })

      it('answers 400 with the Error body for conflicting Content-Length headers', async () => {
        const response = await rawRequest(server.origin,
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`)
        errorCodeOf(response, 400)
      })

      for (const [what, request] of [
        ['a garbage request line', 'GARBAGE\r\n\r\n'],
        ['a bad HTTP version', 'GET /v1/pets HTTP/9.9\r\nHost: x\r\n\r\n'],
        ['a header without a colon', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
        ['a NUL in a header', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n'],
        ['HTTP/1.1 without Host', `GET /v1/pets HTTP/1.1\r\n${AUTH_LINE}\r\n`],
        ['an unknown Transfer-Encoding', `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n{}`],
        ['Transfer-Encoding and Content-Length together (request smuggling)',
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
        ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n']
      ]) {
        it(`answers 400 with the Error body for ${what}`, async () => {
          errorCodeOf(await rawRequest(server.origin, request!), 400)
        })
      }
    })

    describe('petId', () => {
      for (const petId of ['1%2F2', '..%2F..%2Fetc%2Fpasswd', '%2E%2E%2F1', '1%00', '1%20', '%C0%AE%C0%AE', '-1', '0', '9223372036854775808', '1.0', '%EF%BC%91']) {
        it(`answers 400 validation_failed for petId ${petId}`, async () => {
          const response = await get(server, `/pets/${petId}`)
          assert.equal(response.status, 400)
          assert.equal((await errorBody(response)).code, 'validation_failed')
        })
      }

      for (const path of ['/pets/%2e%2e', '/pets/%2e%2e/%2e%2e/etc/passwd', '/pets/1/../../../etc/passwd', '/pets/../../etc/passwd', '/pets/1/2', '/pets//1']) {
        it(`answers a 4xx Error body for ${path}`, async () => {
          const response = await rawRequest(server.origin, `GET /v1${path} HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}\r\n`)
          assert.ok(response.status >= 400 && response.status < 500, String(response.status))
          errorCodeOf(response, response.status)
          assert.doesNotMatch(response.body, /root:/)
        })
      }

      for (const petId of ['%', '%zz', '%C0']) {
        it(`answers 400 with the Error body for the bad percent-encoding ${petId}`, async () => {
          const response = await rawRequest(server.origin, `GET /v1/pets/${petId} HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}\r\n`)
          assert.equal(errorCodeOf(response, 400), 'validation_failed')
          assert.ok(response.headers['x-request-id'] !== undefined)
        })
      }
    })
  })
}

for (const backend of backends()) {
  describe(`${backend.name}: slow and never-ending requests (timeouts shortened to 1 s for headers and 2 s in all)`, { skip: backend.skip }, () => {
    let server: TestServer
    let origin: string
    before(async () => {
      server = await startTestServer({ backend: backend.name, timeouts: { headersMs: 1_000, requestMs: 2_000 } })
      origin = server.origin
    })
    after(async () => { await server.close() })

    it('answers 408 request_timeout with the Error body when the headers never end', async () => {
      const conn = await openRaw(origin)
      const started = Date.now()
      conn.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}`)
      const response = await conn.response
      assert.equal(errorCodeOf(response, 408), 'request_timeout')
      assert.ok(Date.now() - started < 3_000, `answered after ${Date.now() - started} ms`)
    })

    it('answers 408 with the Error body when headers trickle in a byte at a time', async () => {
      const conn = await openRaw(origin)
      const text = `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}X-Slow: ${'a'.repeat(100)}\r\n\r\n`
      let i = 0
      const drip = setInterval(() => { if (i < text.length && !conn.socket.destroyed) conn.write(text[i++]!) }, 50)
      try {
        assert.equal(errorCodeOf(await conn.response, 408), 'request_timeout')
      } finally {
        clearInterval(drip)
      }
    })

    it('answers 408 with the Error body when the body never ends', async () => {
      const conn = await openRaw(origin)
      const started = Date.now()
      conn.write(rawPost('{"name":"a","categoryId":1}').replace(/Content-Length: \d+/, 'Content-Length: 100').slice(0, -5))
      const response = await conn.response
      assert.equal(errorCodeOf(response, 408), 'request_timeout')
      assert.ok(Date.now() - started < 4_000, `answered after ${Date.now() - started} ms`)
    })

    it('keeps serving others while slow clients wait', async () => {
      const slow = await Promise.all(Array.from({ length: 20 }, async () => {
        const conn = await openRaw(origin)
        conn.write('GET /v1/pets HTTP/1.1\r\n')
        return conn
      }))
      const response = await fetch(`${origin}/v1/pets`, { headers: AUTH })
      assert.equal(response.status, 200)
      await Promise.all(slow.map(async (conn) => { errorCodeOf(await conn.response, 408) }))
    })
  })
}
