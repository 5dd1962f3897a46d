import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { startTestServer, type TestServer } from '../support/helper.js'

const OPERATIONS = [['/pets', 'get'], ['/pets', 'post'], ['/pets/{petId}', 'get']] as const

describe('GET /v1/openapi.json and /v1/openapi.yaml', () => {
  let server: TestServer
  let document: any
  /** The schema itself, or the component its `$ref` names. */
  const resolve = (schema: any): any => schema.$ref === undefined ? schema : document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
  before(async () => {
    server = await startTestServer({ env: { PUBLIC_BASE_URL: 'https://api.example.com/v1', STAGING_BASE_URL: 'https://staging.example.com/v1' } })
    document = await (await fetch(`${server.api}/openapi.json`)).json()
  })
  after(async () => { await server.close() })

  it('is OpenAPI 3.1 at version 1.0.0 with both servers from the configuration', () => {
    assert.match(document.openapi, /^3\.1\./)
    assert.equal(document.info.version, '1.0.0')
    assert.deepEqual(document.servers.map((s: { url: string }) => s.url), ['https://api.example.com/v1', 'https://staging.example.com/v1'])
  })

  it('declares the bearer scheme for every operation', () => {
    assert.deepEqual(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: document.components.securitySchemes.bearerAuth.description })
    assert.deepEqual(document.security, [{ bearerAuth: [] }])
  })

  it('has exactly the three operations, by their operationIds, relative to the /v1 base address', () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, { operationId: string }>).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`))
    assert.deepEqual(operations.sort(), ['GET /pets listPets', 'GET /pets/{petId} getPet', 'POST /pets createPet'])
  })

  it('documents every response and error code of each operation', () => {
    const codes = (path: string, method: string): string[] => Object.keys(document.paths[path][method].responses).sort()
    assert.deepEqual(codes('/pets', 'get'), ['200', '400', '401', '403', '405', '408', '414', '429', '431', '500', '503'])
    assert.deepEqual(codes('/pets', 'post'), ['201', '400', '401', '403', '405', '408', '409', '413', '414', '415', '422', '429', '431', '500', '503'])
    assert.deepEqual(codes('/pets/{petId}', 'get'), ['200', '400', '401', '403', '404', '405', '408', '410', '414', '429', '431', '500', '503'])
  })

  it('states each operation\'s scope in its security requirement, and the 403 with its challenge', () => {
    assert.deepEqual(document.paths['/pets'].get.security, [{ bearerAuth: ['pets:read'] }])
    assert.deepEqual(document.paths['/pets'].post.security, [{ bearerAuth: ['pets:write'] }])
    assert.deepEqual(document.paths['/pets/{petId}'].get.security, [{ bearerAuth: ['pets:read'] }])
    const forbidden = document.paths['/pets'].post.responses['403']
    assert.equal(forbidden.content['application/json'].example.message, 'Authorization: this API key lacks pets:write, which createPet needs')
    assert.ok(forbidden.headers['WWW-Authenticate'])
  })

  it('gives each error its Error example with its own status, and Allow on 405', () => {
    for (const [path, method, allow] of [['/pets', 'get', 'GET, POST'], ['/pets', 'post', 'GET, POST'], ['/pets/{petId}', 'get', 'GET']] as const) {
      for (const [status, response] of Object.entries(document.paths[path][method].responses as Record<string, any>)) {
        if (Number(status) < 400) continue
        const example = response.content['application/json'].example
        assert.equal(example.status, Number(status), `${method} ${path} ${status}`)
      }
      const notAllowed = document.paths[path][method].responses['405']
      assert.ok(notAllowed.headers.Allow, `${method} ${path} 405 Allow`)
      assert.match(notAllowed.content['application/json'].example.message, new RegExp(`; use ${allow}$`))
    }
  })

  it('publishes the validation rules: limit 1..100 default 20, status enum, int64 ids, strict bodies', () => {
    const parameters = document.paths['/pets'].get.parameters
    const limit = parameters.find((p: { name: string }) => p.name === 'limit').schema
    assert.deepEqual([limit.type, limit.minimum, limit.maximum, limit.default], ['integer', 1, 100, 20])
    const status = parameters.find((p: { name: string }) => p.name === 'status').schema
    assert.deepEqual(status.enum, ['available', 'pending', 'sold'])
    const body = resolve(document.paths['/pets'].post.requestBody.content['application/json'].schema)
    assert.equal(body.additionalProperties, false)
    assert.deepEqual([...body.required].sort(), ['categoryId', 'name'])
    assert.equal(body.properties.categoryId.format, 'int64')
    assert.equal(body.properties.name.maxLength, 255)
    const pet = resolve(document.paths['/pets/{petId}'].get.responses['200'].content['application/json'].schema)
    assert.deepEqual([...pet.required].sort(), ['categoryId', 'id', 'name', 'status'])
    assert.deepEqual(resolve(pet.properties.status).enum, ['available', 'pending', 'sold'])
  })

  it('names the resources as components: Pet, Pets, PetStatus, NewPet and Error', () => {
    const schemas = document.components.schemas
    assert.deepEqual(Object.keys(schemas).sort(), ['Error', 'NewPet', 'Pet', 'PetStatus', 'Pets'])
    assert.deepEqual(schemas.Pet.properties.status, { $ref: '#/components/schemas/PetStatus' })
    assert.deepEqual(schemas.Pets.items, { $ref: '#/components/schemas/Pet' })
    assert.equal(schemas.NewPet.properties.id, undefined)
    assert.deepEqual(Object.keys(schemas.Error.properties).sort(), ['code', 'message', 'status'])
  })

  it('refers to the components from every request and response body, description and headers kept on the response', () => {
    assert.deepEqual(document.paths['/pets'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewPet' })
    const success: Record<string, string> = { 'get /pets': 'Pets', 'post /pets': 'Pet', 'get /pets/{petId}': 'Pet' }
    for (const [path, method] of OPERATIONS) {
      for (const [status, response] of Object.entries(document.paths[path][method].responses as Record<string, any>)) {
        const name = Number(status) < 400 ? success[`${method} ${path}`] : 'Error'
        assert.deepEqual(response.content['application/json'].schema, { $ref: `#/components/schemas/${name}` }, `${method} ${path} ${status}`)
        assert.ok(response.description.length > 0, `${method} ${path} ${status} description`)
      }
    }
    // getPet's errors keep the deprecation headers beside their reference to Error.
    for (const status of ['400', '401', '404', '410']) {
      assert.ok(document.paths['/pets/{petId}'].get.responses[status].headers.Deprecation, `getPet ${status} Deprecation`)
    }
    assert.ok(document.paths['/pets'].post.responses['201'].headers.Location)
  })

  it('gives an example for each body', () => {
    const examplesOf = (content: any): unknown => content['application/json'].example ?? content['application/json'].examples ?? resolve(content['application/json'].schema).examples
    assert.ok(examplesOf(document.paths['/pets'].post.requestBody.content))
    for (const [path, method] of OPERATIONS) {
      for (const [status, response] of Object.entries(document.paths[path][method].responses as Record<string, { content: unknown }>)) {
        assert.ok(examplesOf(response.content), `${method} ${path} ${status}`)
      }
    }
  })

  it('serves the same document as YAML', async () => {
    const response = await fetch(`${server.api}/openapi.yaml`)
    assert.match(response.headers.get('content-type') ?? '', /yaml/)
    assert.deepEqual(parse(await response.text()), document)
  })

  it('builds the production server from the Host header when PUBLIC_BASE_URL is unset', async () => {
    const plain = await startTestServer()
    try {
      const doc = await (await fetch(`${plain.api}/openapi.json`)).json() as { servers: Array<{ url: string }> }
      assert.deepEqual(doc.servers.map((s) => s.url), [plain.api])
    } finally {
      await plain.close()
    }
  })
})
