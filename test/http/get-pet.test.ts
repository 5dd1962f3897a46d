import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'lossless-json'
import { backends, errorBody, get, post, startTestServer, type TestServer } from '../support/helper.js'

const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT'

function assertDeprecationHeaders (response: Response, api: string): void {
  const deprecation = response.headers.get('deprecation')
  assert.match(deprecation ?? '', /^@\d+$/, 'Deprecation is @<unix seconds> (RFC 9745)')
  assert.equal(response.headers.get('sunset'), SUNSET)
  assert.ok(Number(deprecation!.slice(1)) * 1000 <= Date.parse(SUNSET), 'deprecated before the sunset')
  const link = response.headers.get('link') ?? ''
  assert.match(link, /<[^>]+\/docs\/>; rel="deprecation"/)
  assert.ok(link.includes(`<${api}/pets>; rel="successor-version"`), link)
}

for (const backend of backends()) {
  describe(`${backend.name}: GET /v1/pets/{petId}`, { skip: backend.skip }, () => {
    let server: TestServer
    let id: number
    before(async () => {
      server = await startTestServer({ backend: backend.name })
      id = ((await (await post(server, '/pets', { name: 'Rex', categoryId: 3, status: 'pending' })).json()) as { id: number }).id
    })
    after(async () => { await server.close() })

    it('answers 200 with the animal and the deprecation headers', async () => {
      const response = await get(server, `/pets/${id}`)
      assert.equal(response.status, 200)
      assert.deepEqual(await response.json(), { id, name: 'Rex', categoryId: 3, status: 'pending' })
      assertDeprecationHeaders(response, server.api)
      assert.equal(response.headers.get('cache-control'), 'no-store')
    })

    // The database writes getPet's body, the schema's serializer the list's: the bytes must agree.
    it('writes each animal in the same bytes as the list does', async () => {
      const names = ['say "hi" \\ back/slash', 'Émile 猫 😀', 'line\u2028separator\u2029', '<b>&amp;</b>', "it's"]
      for (const [i, name] of names.entries()) {
        const body = stringify({ name, categoryId: i === 0 ? 9223372036854775807n : i + 1, status: 'sold' })!
        assert.equal((await post(server, '/pets', body)).status, 201)
      }
      // An id past 2^53 too: its digits must come out exact from the database's JSON.
      await server.store.importPets([{ id: 9223372036854775806n, name: 'far', categoryId: 1, status: 'sold' }])
      const list = await (await get(server, '/pets?limit=100')).text()
      const ids = [...list.matchAll(/"id":(\d+)/g)].map((match) => match[1])
      assert.ok(ids.length >= names.length + 1 && ids.includes('9223372036854775806'), list)
      const bodies = await Promise.all(ids.map(async (petId) => await (await get(server, `/pets/${petId}`)).text()))
      assert.equal(`[${bodies.join(',')}]`, list)
    })

    it('answers 404 not_found for an unknown id, with the deprecation headers', async () => {
      const response = await get(server, '/pets/999999')
      assert.equal(response.status, 404)
      assert.equal((await errorBody(response)).code, 'not_found')
      assertDeprecationHeaders(response, server.api)
    })

    it('answers 404 for the largest int64 id, 400 past it', async () => {
      assert.equal((await get(server, '/pets/9223372036854775807')).status, 404)
      assert.equal((await get(server, '/pets/9223372036854775808')).status, 400)
    })

    for (const petId of ['0', '-1', 'abc', '1.5', '1e3', '0x10', '%2B5', '%201', '1%2F2', '..%2F..%2Fetc', '99999999999999999999999', 'x'.repeat(5000)]) {
      it(`answers 400 validation_failed for petId ${petId.slice(0, 20)}, with the deprecation headers`, async () => {
        const response = await get(server, `/pets/${petId}`)
        assert.equal(response.status, 400)
        const error = await errorBody(response)
        assert.equal(error.code, 'validation_failed')
        assert.equal(error.message, 'petId: must be an integer from 1 to 9223372036854775807')
        assertDeprecationHeaders(response, server.api)
      })
    }

    it('answers 401 with the deprecation headers when the key is missing', async () => {
      const response = await fetch(`${server.api}/pets/${id}`)
      assert.equal(response.status, 401)
      assertDeprecationHeaders(response, server.api)
    })

    it('is marked deprecated in the OpenAPI document, with x-sunset and the headers documented', async () => {
      const document = await (await fetch(`${server.api}/openapi.json`)).json() as any
      const operation = document.paths['/pets/{petId}'].get
      assert.equal(operation.operationId, 'getPet')
      assert.equal(operation.deprecated, true)
      assert.equal(operation['x-sunset'], '2030-12-05T00:00:00.000Z')
      assert.deepEqual(Object.keys(operation.responses['200'].headers).filter((h) => ['Deprecation', 'Sunset', 'Link'].includes(h)).sort(), ['Deprecation', 'Link', 'Sunset'])
    })
  })

  describe(`${backend.name}: GET /v1/pets/{petId} after the sunset`, { skip: backend.skip }, () => {
    let server: TestServer
    let clock = new Date('2030-12-04T23:59:59Z')
    before(async () => { server = await startTestServer({ backend: backend.name, now: () => clock }) })
    after(async () => { await server.close() })

    it('answers until the sunset instant, then 410 gone with the deprecation headers', async () => {
      const pet = await (await post(server, '/pets', { name: 'Rex', categoryId: 3 })).json() as { id: number }
      assert.equal((await get(server, `/pets/${pet.id}`)).status, 200)
      clock = new Date('2030-12-05T00:00:00Z')
      const response = await get(server, `/pets/${pet.id}`)
      assert.equal(response.status, 410)
      assert.equal((await errorBody(response)).code, 'gone')
      assertDeprecationHeaders(response, server.api)
      assert.equal((await get(server, '/pets')).status, 200, 'the successor still answers')
    })

    it('still answers 401 first after the sunset', async () => {
      clock = new Date('2031-01-01T00:00:00Z')
      assert.equal((await fetch(`${server.api}/pets/1`)).status, 401)
    })

    it('takes the sunset from GETPET_SUNSET', async () => {
      const early = await startTestServer({ backend: backend.name, env: { GETPET_SUNSET: '2026-06-01T00:00:00Z' } })
      try {
        const response = await get(early, '/pets/1')
        assert.equal(response.status, 410)
        assert.equal(response.headers.get('sunset'), 'Mon, 01 Jun 2026 00:00:00 GMT')
      } finally {
        await early.close()
      }
    })
  })
}
