import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, backends, errorBody, get, startTestServer, type TestServer } from '../support/helper.js'
import { rawRequest, type RawResponse } from '../support/raw-http.js'

const AUTH_LINE = `Authorization: Bearer ${TEST_KEY}\r\n`

function assertDeprecationHeaders (headers: Record<string, string | null>): void {
  assert.equal(headers.deprecation, '@1767225600')
  assert.equal(headers.sunset, 'Thu, 05 Dec 2030 00:00:00 GMT')
  assert.match(headers.link ?? '', /rel="deprecation".*rel="successor-version"/)
}

function headersOf (response: Response | RawResponse): Record<string, string | null> {
  if (!(response instanceof Response)) return response.headers
  return { deprecation: response.headers.get('deprecation'), sunset: response.headers.get('sunset'), link: response.headers.get('link') }
}

for (const backend of backends()) {
  describe(`${backend.name}: getPet's protocol-level errors carry the deprecation headers`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    for (const digits of [8_190, 9_000]) {
      it(`answers 414 with Deprecation, Sunset and Link for a petId of ${digits} digits`, async () => {
        const response = await get(server, `/pets/${'1'.repeat(digits)}`)
        assert.equal(response.status, 414)
        assert.equal((await errorBody(response)).code, 'uri_too_long')
        assertDeprecationHeaders(headersOf(response))
      })
    }

    it('answers 431 with Deprecation, Sunset and Link for too many header fields', async () => {
      const many = Array.from({ length: 600 }, (_, i) => `X-${i}: a\r\n`).join('')
      const response = await rawRequest(server.origin, `GET /v1/pets/1 HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}${many}\r\n`)
      assert.equal(response.status, 431, response.body)
      assertDeprecationHeaders(headersOf(response))
    })

    it('answers bad percent-encoding in the petId with Deprecation, Sunset and Link: 400 with a key, 401 without', async () => {
      const withKey = await get(server, '/pets/%ZZ')
      assert.equal(withKey.status, 400)
      assertDeprecationHeaders(headersOf(withKey))
      const withoutKey = await fetch(`${server.api}/pets/%ZZ`)
      assert.equal(withoutKey.status, 401)
      assertDeprecationHeaders(headersOf(withoutKey))
      for (const [method, path, status] of [['POST', '/pets/%ZZ', 405], ['GET', '/pets/%ZZ/more', 404], ['GET', '/%ZZ', 404]] as const) {
        const other = await fetch(`${server.api}${path}`, { method, headers: AUTH })
        assert.equal(other.status, status, `${method} ${path}`)
        assert.equal(other.headers.get('deprecation'), null, `${method} ${path} is no getPet`)
      }
    })

    it('measures the target as sent: 3,000 bad escapes in 3 KiB are the route\'s 400, not a 414', async () => {
      const response = await get(server, `/pets/${'%'.repeat(3_000)}`)
      assert.equal(response.status, 400)
      assertDeprecationHeaders(headersOf(response))
    })

    it('logs such a request as any other of its route: its request line names getPet\'s route', async () => {
      const response = await get(server, '/pets/%C0', { 'x-request-id': 'bad-percent-encoding' })
      assert.equal(response.status, 400)
      const lines = server.logs().filter((line) => line.requestId === 'bad-percent-encoding' && line.msg === 'request')
      assert.deepEqual(lines.map(({ route, status }) => ({ route, status })), [{ route: '/v1/pets/:petId', status: 400 }])
    })

    it('answers 400 with Deprecation, Sunset and Link for a header sent twice', async () => {
      const response = await rawRequest(server.origin,
        `GET /v1/pets/1 HTTP/1.1\r\nHost: x\r\n${AUTH_LINE}Content-Type: application/json\r\nContent-Type: text/plain\r\n\r\n`)
      assert.equal(response.status, 400, response.body)
      assert.match(JSON.parse(response.body).message, /^content-type: must be sent once/)
      assertDeprecationHeaders(headersOf(response))
    })
  })
}
