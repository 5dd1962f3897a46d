import assert from 'node:assert/strict'
import { METHODS } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'
import { rawRequest } from '../support/raw-http.js'

const AUTH_LINE = `Authorization: Bearer ${TEST_KEY}\r\n`

for (const backend of backends()) {
  describe(`${backend.name}: other methods on the known paths`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    for (const [path, allow] of [['/v1/pets', 'GET, POST'], ['/v1/pets/1', 'GET']] as const) {
      it(`answers every other method on ${path} with 405 and Allow: ${allow}`, async () => {
        const others = METHODS.filter((method) => method !== 'CONNECT' && !allow.split(', ').includes(method))
        assert.ok(others.includes('TRACE') && others.includes('PROPFIND'))
        for (const method of others) {
          const response = await rawRequest(server.origin, `${method} ${path} HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Length: 0\r\n\r\n`)
          assert.equal(response.status, 405, `${method} ${path}: ${response.body}`)
          assert.equal(response.headers.allow, allow, method)
          if (method !== 'HEAD') assert.equal(JSON.parse(response.body).code, 'method_not_allowed', method)
        }
      })
    }

    it('answers 405 whatever body another method sends', async () => {
      for (const extra of ['Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc', 'Content-Type: application/json\r\nContent-Length: 1\r\n\r\n{']) {
        const response = await rawRequest(server.origin, `PUT /v1/pets HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}${extra}`)
        assert.equal(response.status, 405, response.body)
      }
    })

    const bodies = [
      ['malformed JSON', 'application/json', '{bad'],
      ['a text/plain body', 'text/plain', 'Rex'],
      ['a body over 16 KiB', 'application/json', `{"name":"${'x'.repeat(20_000)}"}`]
    ] as const

    for (const [what, type, body] of bodies) {
      it(`answers POST /v1/pets/1 with 405 and Allow: GET, without reading ${what}`, async () => {
        const response = await fetch(`${server.api}/pets/1`, { method: 'POST', headers: { ...AUTH, 'content-type': type }, body })
        assert.equal(response.status, 405)
        assert.equal(response.headers.get('allow'), 'GET')
        assert.equal((await errorBody(response)).code, 'method_not_allowed')
      })

      it(`answers POST to an unknown path with 404, without reading ${what}`, async () => {
        for (const url of [`${server.api}/nowhere`, `${server.origin}/nowhere`]) {
          const response = await fetch(url, { method: 'POST', headers: { ...AUTH, 'content-type': type }, body })
          assert.equal(response.status, 404, url)
          assert.equal((await errorBody(response)).code, 'not_found', url)
        }
      })
    }

    it('answers POST /v1/pets/1 and POST to an unknown path under /v1 without a key with 401 first', async () => {
      for (const path of ['/pets/1', '/nowhere']) {
        const response = await fetch(`${server.api}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{bad' })
        assert.equal(response.status, 401, path)
      }
    })

    it('answers TRACE without a key with 401 first', async () => {
      const response = await rawRequest(server.origin, 'TRACE /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n')
      assert.equal(response.status, 401)
    })
  })
}
