import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, backends, errorBody, get, startTestServer, type TestServer } from '../support/helper.js'
import { rawRequest } from '../support/raw-http.js'

for (const backend of backends()) {
  describe(`${backend.name}: routes, methods and common headers`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    for (const [method, path, allow] of [['DELETE', '/pets', 'GET, POST'], ['PUT', '/pets', 'GET, POST'], ['PATCH', '/pets/1', 'GET'], ['POST', '/pets/1', 'GET'], ['DELETE', '/pets/1', 'GET'], ['HEAD', '/pets', 'GET, POST']] as const) {
      it(`answers 405 method_not_allowed with Allow: ${allow} for ${method} /v1${path}`, async () => {
        const response = await fetch(`${server.api}${path}`, { method, headers: AUTH })
        assert.equal(response.status, 405)
        assert.equal(response.headers.get('allow'), allow)
        if (method !== 'HEAD') assert.equal((await errorBody(response)).code, 'method_not_allowed')
      })
    }

    for (const path of ['/nowhere', '/pets/1/owner', '/', '/v2/pets']) {
      it(`answers 404 not_found for the unknown route /v1${path}`, async () => {
        const response = await get(server, path)
        assert.equal(response.status, 404)
        assert.equal((await errorBody(response)).code, 'not_found')
      })
    }

    it('answers 404 with the Error body outside /v1 too', async () => {
      const response = await fetch(`${server.origin}/nothing-here`)
      assert.equal(response.status, 404)
      assert.equal((await errorBody(response)).code, 'not_found')
    })

    it('answers a target the router cannot read with 400 after every stage: the key first, then its log line', async () => {
      for (const [i, target] of ['http:///v1/pets', 'http://x:99999/v1/pets/1', 'http://x/v1/pets#top'].entries()) {
        const refused = await rawRequest(server.origin, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)
        assert.equal(refused.status, 401, `${target}: ${refused.body}`)
        const id = `unreadable-${i}`
        const response = await rawRequest(server.origin, `GET ${target} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`)
        assert.equal(response.status, 400, target)
        assert.deepEqual(JSON.parse(response.body), { code: 'validation_failed', message: 'path: is not a valid URL', status: 400 })
        assert.equal(response.headers['cache-control'], 'no-store', target)
        const lines = server.logs().filter((line) => line.requestId === id && line.msg === 'request')
        assert.deepEqual(lines.map(({ route, status }) => ({ route, status })), [{ route: '(no route)', status: 400 }], target)
      }
    })

    it('echoes a well-formed X-Request-Id and replaces any other', async () => {
      const echoed = await get(server, '/pets', { 'x-request-id': 'abc.DEF_1:2-3' })
      assert.equal(echoed.headers.get('x-request-id'), 'abc.DEF_1:2-3')
      for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
        const response = await get(server, '/pets', { 'x-request-id': bad })
        const id = response.headers.get('x-request-id')
        assert.ok(id !== null && id !== bad && /^[A-Za-z0-9._:-]{1,128}$/.test(id), `${bad} -> ${id}`)
      }
      const response = await fetch(`${server.origin}/healthz`)
      assert.match(response.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/)
    })

    it('logs every request line with its request id', async () => {
      await get(server, '/pets', { 'x-request-id': 'trace-me-123' })
      const lines = server.logs().filter((line) => line.requestId === 'trace-me-123')
      assert.ok(lines.length >= 1)
      assert.ok(lines.every((line) => typeof line.level === 'number' && typeof line.time === 'number'))
      assert.equal(lines.at(-1)!.status, 200)
    })

    it('sends Cache-Control: no-store on responses behind the key, errors included', async () => {
      for (const path of ['/pets', '/pets/999', '/pets?limit=0', '/nowhere']) {
        assert.equal((await get(server, path)).headers.get('cache-control'), 'no-store', path)
      }
    })
  })
}
