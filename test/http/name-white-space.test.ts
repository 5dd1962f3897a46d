import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backends, errorBody, get, post, startTestServer, type TestServer } from '../support/helper.js'

for (const backend of backends()) {
  describe(`${backend.name}: "only white space" in a name means Unicode White_Space`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    it('stores a name of only U+FEFF (a format character, not white space) as sent', async () => {
      const created = await post(server, '/pets', { name: '\uFEFF', categoryId: 1 })
      assert.equal(created.status, 201)
      const { id } = await created.json() as { id: number }
      assert.equal((await (await get(server, `/pets/${id}`)).json() as { name: string }).name, '\uFEFF')
    })

    it('still refuses a name of only Unicode white space', async () => {
      for (const name of [' ', '\u00a0', '\u2003\u3000', '\u2028']) {
        const response = await post(server, '/pets', { name, categoryId: 1 })
        assert.equal(response.status, 400, JSON.stringify(name))
        assert.equal((await errorBody(response)).code, 'validation_failed')
      }
    })

    it('publishes the same rule as the OpenAPI pattern of name', async () => {
      const document = await (await fetch(`${server.api}/openapi.json`)).json() as any
      const pattern = new RegExp(document.components.schemas.NewPet.properties.name.pattern, 'u')
      assert.ok(pattern.test('\uFEFF'))
      assert.ok(!pattern.test('\u00a0\u2003'))
    })
  })
}
