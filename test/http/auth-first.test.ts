import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'
import { rawRequest } from '../support/raw-http.js'

for (const backend of backends()) {
  describe(`${backend.name}: auth comes first`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    it('answers 401 with the plain challenge to bad percent-encoding without a key', async () => {
      const response = await fetch(`${server.api}/pets/%ZZ`)
      assert.equal(response.status, 401)
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="petstore"')
      assert.equal(response.headers.get('cache-control'), 'no-store')
      assert.ok(response.headers.get('x-request-id'))
      assert.equal((await errorBody(response)).code, 'unauthorized')
    })

    it('answers 401 invalid_token to bad percent-encoding with an unknown key', async () => {
      const response = await fetch(`${server.api}/pets/%ZZ`, { headers: { authorization: 'Bearer unknown-key-0123456789abcdef' } })
      assert.equal(response.status, 401)
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="petstore", error="invalid_token"')
      assert.equal((await errorBody(response)).code, 'unauthorized')
    })

    it('answers 400 to bad percent-encoding with a valid key', async () => {
      const response = await fetch(`${server.api}/pets/%ZZ`, { headers: AUTH })
      assert.equal(response.status, 400)
      assert.equal((await errorBody(response)).code, 'validation_failed')
    })

    it('answers 401 to targets the router reads as under /v1: percent-encoded, absolute-form', async () => {
      for (const target of ['/%761/pets', '/%76%31/pets/1', '/v%31/pets?limit=1', 'http://x/v1/pets', 'HTTP://x/v1/pets/1']) {
        const response = await rawRequest(server.origin, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)
        assert.equal(response.status, 401, `${target}: ${response.body}`)
        assert.equal(response.headers['cache-control'], 'no-store', target)
        assert.equal(JSON.parse(response.body).code, 'unauthorized', target)
      }
      const body = '{"name":"no key","categoryId":1}'
      for (const target of ['/v%31/pets', 'http://x/v1/pets']) {
        const response = await rawRequest(server.origin,
          `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
        assert.equal(response.status, 401, `${target}: ${response.body}`)
      }
      const animals = await (await fetch(`${server.api}/pets?limit=100`, { headers: AUTH })).json() as Array<{ name: string }>
      assert.ok(!animals.some((animal) => animal.name === 'no key'), 'nothing was created without a key')
    })

    it('answers 401 before the request checks: a header sent twice, a long target, many header fields', async () => {
      const many = Array.from({ length: 600 }, (_, i) => `X-${i}: a\r\n`).join('')
      for (const request of [
        'POST /v1/pets HTTP/1.1\r\nHost: x\r\nIdempotency-Key: k1\r\nIdempotency-Key: k2\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
        'GET /v1/pets/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\n\r\n',
        `GET /v1/pets?x=${'a'.repeat(9_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${many}\r\n`
      ]) {
        const response = await rawRequest(server.origin, request)
        assert.equal(response.status, 401, `${request.slice(0, 40)}: ${response.body}`)
        assert.equal(JSON.parse(response.body).code, 'unauthorized')
      }
    })

    it('serves what is public whatever the spelling of its path', async () => {
      for (const target of ['/v1/openapi%2Ejson', 'http://x/v1/openapi.json', '/%68ealthz']) {
        const response = await rawRequest(server.origin, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)
        assert.equal(response.status, 200, target)
      }
    })

    it('answers 401 with the plain challenge to Authorization sent twice, even when one is valid', async () => {
      for (const second of [`Bearer ${TEST_KEY}`, 'Bearer unknown-key-0123456789abcdef']) {
        const response = await rawRequest(server.origin,
          `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nAuthorization: ${second}\r\n\r\n`)
        assert.equal(response.status, 401, response.body)
        assert.equal(response.headers['www-authenticate'], 'Bearer realm="petstore"')
        assert.equal(JSON.parse(response.body).code, 'unauthorized')
      }
    })
  })
}
