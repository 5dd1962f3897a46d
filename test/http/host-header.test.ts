import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { backends, startTestServer, type TestServer } from '../support/helper.js'
import { rawRequest } from '../support/raw-http.js'

const AUTH_LINE = `Authorization: Bearer ${TEST_KEY}\r\n`

for (const backend of backends()) {
  describe(`${backend.name}: the Host header`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    for (const host of ['a>; rel="x", <http://b', 'a b', 'evil.example/path', 'a"b', '[::1', 'a:port']) {
      it(`answers 400 validation_failed naming Host, key or no key, for Host: ${host}`, async () => {
        for (const [path, auth] of [['/v1/pets', AUTH_LINE], ['/v1/pets', ''], ['/v1/pets/1', AUTH_LINE], ['/v1/openapi.json', '']]) {
          const response = await rawRequest(server.origin, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}\r\n`)
          assert.equal(response.status, 400, `${path}: ${response.body}`)
          const body = JSON.parse(response.body)
          assert.equal(body.code, 'validation_failed')
          assert.match(body.message, /^Host: /)
          assert.equal(response.headers.link, undefined, 'no link is built from a bad Host')
        }
      })
    }

    it('answers 400 naming Host to Host sent twice, key or no key, with no link built from either', async () => {
      for (const [path, auth] of [['/v1/pets/1', AUTH_LINE], ['/v1/pets/1', ''], ['/v1/pets', AUTH_LINE]]) {
        const response = await rawRequest(server.origin, `GET ${path} HTTP/1.1\r\nHost: a>; rel="x", <http://evil\r\nHost: ok\r\n${auth}\r\n`)
        assert.equal(response.status, 400, `${path}: ${response.body}`)
        assert.equal(JSON.parse(response.body).message, 'Host: must be sent once')
        assert.equal(response.headers.link, undefined, 'no link is built from an unchecked Host')
      }
    })

    it('builds links from the address the request came in on when HTTP/1.0 sends no Host', async () => {
      const origin = server.origin.replace(/[.[\]]/g, '\\$&')
      const created = await rawRequest(server.origin,
        `POST /v1/pets HTTP/1.0\r\n${AUTH_LINE}Content-Type: application/json\r\nContent-Length: 27\r\n\r\n{"name":"a","categoryId":1}`)
      assert.equal(created.status, 201, created.body)
      assert.match(created.headers.location ?? '', new RegExp(`^${origin}/v1/pets/[0-9]+$`))
      const deprecated = await rawRequest(server.origin, `GET /v1/pets/1 HTTP/1.0\r\n${AUTH_LINE}\r\n`)
      assert.match(deprecated.headers.link ?? '', new RegExp(`^<${origin}/docs/>; rel="deprecation"`))
    })

    for (const host of ['api.example.com', 'api.example.com:8443', '127.0.0.1:8080', '[::1]:8080', '[2001:db8::1]', 'xn--bcher-kva.example']) {
      it(`builds links from Host: ${host}`, async () => {
        const response = await rawRequest(server.origin,
          `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\n${AUTH_LINE}Content-Type: application/json\r\nContent-Length: 27\r\n\r\n{"name":"a","categoryId":1}`)
        assert.equal(response.status, 201, response.body)
        const origin = `http://${host.replace(/[.[\]]/g, '\\$&')}`
        assert.match(response.headers.location ?? '', new RegExp(`^${origin}/v1/pets/[0-9]+$`))
        // getPet's deprecation Link too: the tests run one after the other, each Host after another one.
        const deprecated = await rawRequest(server.origin, `GET /v1/pets/1 HTTP/1.1\r\nHost: ${host}\r\n${AUTH_LINE}\r\n`)
        assert.match(deprecated.headers.link ?? '', new RegExp(`^<${origin}/docs/>; rel="deprecation"; type="text/html", <${origin}/v1/pets>; rel="successor-version"$`))
      })
    }
  })
}
