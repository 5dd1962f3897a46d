import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import { toInt64 } from '../../src/schemas/int64.js'
import { AUTH, JSON_AUTH, backends, errorBody, get, post, startTestServer, type TestServer } from '../support/helper.js'

const tooLong = 'x'.repeat(256)

// Bodies that break a rule, each with the field its message must name.
const INVALID_BODIES: Array<[string, string, string]> = [
  ['a missing name', '{"categoryId":1}', 'name'],
  ['a missing categoryId', '{"name":"Rex"}', 'categoryId'],
  ['an id', '{"id":5,"name":"Rex","categoryId":1}', 'id'],
  ['an unknown field (typo)', '{"name":"Rex","categoryID":1}', 'categoryID'],
  ['a __proto__ key', '{"name":"Rex","categoryId":1,"__proto__":{"admin":true}}', '__proto__'],
  ['a constructor key', '{"name":"Rex","categoryId":1,"constructor":{"prototype":{}}}', 'constructor'],
  ['null for name', '{"name":null,"categoryId":1}', 'name'],
  ['null for status', '{"name":"Rex","categoryId":1,"status":null}', 'status'],
  ['a number as a string', '{"name":"Rex","categoryId":"1"}', 'categoryId'],
  ['a float', '{"name":"Rex","categoryId":1.5}', 'categoryId'],
  ['a float with a zero fraction', '{"name":"Rex","categoryId":1.0}', 'categoryId'],
  ['an exponent', '{"name":"Rex","categoryId":1e2}', 'categoryId'],
  ['categoryId 0', '{"name":"Rex","categoryId":0}', 'categoryId'],
  ['a negative categoryId', '{"name":"Rex","categoryId":-1}', 'categoryId'],
  ['categoryId 2^63', '{"name":"Rex","categoryId":9223372036854775808}', 'categoryId'],
  ['a huge categoryId', `{"name":"Rex","categoryId":1${'0'.repeat(400)}}`, 'categoryId'],
  ['an unknown status', '{"name":"Rex","categoryId":1,"status":"lost"}', 'status'],
  ['an empty name', '{"name":"","categoryId":1}', 'name'],
  ['a name of white space only', '{"name":" \\t\\u3000\\u00a0","categoryId":1}', 'name'],
  ['a name of 256 characters', `{"name":"${tooLong}","categoryId":1}`, 'name'],
  ['a name of 256 emoji (512 UTF-16 units)', `{"name":"${'🐕'.repeat(256)}","categoryId":1}`, 'name'],
  ['a NUL in the name', '{"name":"R\\u0000x","categoryId":1}', 'name'],
  ['a control character in the name', '{"name":"R\\u0007x","categoryId":1}', 'name'],
  ['a lone surrogate in the name', '{"name":"R\\ud800x","categoryId":1}', 'name'],
  ['a number for name', '{"name":42,"categoryId":1}', 'name'],
  ['an array body', '[{"name":"Rex","categoryId":1}]', 'body'],
  ['a string body', '"Rex"', 'body'],
  ['a null body', 'null', 'body']
]

for (const backend of backends()) {
  describe(`${backend.name}: POST /v1/pets`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    it('answers 201 with the animal, its new id, status available by default, and Location', async () => {
      const response = await post(server, '/pets', { name: 'Rex', categoryId: 3 })
      assert.equal(response.status, 201)
      const pet = await response.json() as { id: number }
      assert.deepEqual(pet, { id: pet.id, name: 'Rex', categoryId: 3, status: 'available' })
      assert.equal(response.headers.get('location'), `${server.api}/pets/${pet.id}`)
      assert.equal(response.headers.get('cache-control'), 'no-store')
      const fetched = await (await get(server, `/pets/${pet.id}`)).json()
      assert.deepEqual(fetched, pet)
    })

    it('keeps the status sent', async () => {
      const pet = await (await post(server, '/pets', { name: 'Tom', categoryId: 1, status: 'sold' })).json() as { status: string }
      assert.equal(pet.status, 'sold')
    })

    it('assigns increasing, unique ids', async () => {
      const ids = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
        ((await (await post(server, '/pets', { name: `p${i}`, categoryId: 1 })).json()) as { id: number }).id))
      assert.equal(new Set(ids).size, 20)
    })

    for (const categoryId of ['9007199254740993', '9223372036854775807', '9007199254740992', '9007199254740991']) {
      it(`stores categoryId ${categoryId} exactly and returns it exactly`, async () => {
        const response = await post(server, '/pets', `{"name":"Big","categoryId":${categoryId}}`)
        assert.equal(response.status, 201)
        const text = await response.text()
        assert.match(text, new RegExp(`"categoryId":${categoryId}[,}]`))
        const id = /"id":(\d+)/.exec(text)![1]
        assert.match(await (await get(server, `/pets/${id}`)).text(), new RegExp(`"categoryId":${categoryId}[,}]`))
        assert.match(await (await get(server, '/pets?limit=100')).text(), new RegExp(`"categoryId":${categoryId}[,}]`))
      })
    }

    it('stores names as sent: no trimming, code points counted (255 emoji are fine)', async () => {
      for (const name of ['  Rex  ', '🐕'.repeat(255), 'Ünïcödé 名前', '\u200bzero width']) {
        const response = await post(server, '/pets', { name, categoryId: 1 })
        assert.equal(response.status, 201, name)
        assert.equal((await response.json() as { name: string }).name, name)
      }
    })

    for (const [what, body, field] of INVALID_BODIES) {
      it(`answers 400 validation_failed naming ${field} for ${what}`, async () => {
        const response = await post(server, '/pets', body)
        assert.equal(response.status, 400)
        const error = await errorBody(response)
        assert.equal(error.code, 'validation_failed', error.message)
        assert.ok(error.message.startsWith(`${field}: `), error.message)
      })
    }

    it('says the rule in the message', async () => {
      assert.equal((await errorBody(await post(server, '/pets', { name: 'Rex', categoryId: 0 }))).message,
        'categoryId: must be an integer from 1 to 9223372036854775807')
      assert.equal((await errorBody(await post(server, '/pets', { name: 'Rex' }))).message, 'categoryId: is required')
    })

    for (const [what, body] of [['malformed JSON', '{"name":'], ['trailing garbage', '{"name":"a","categoryId":1} x'], ['duplicate keys', '{"name":"a","name":"b","categoryId":1}'], ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`], ['an empty body', '']]) {
      it(`answers 400 malformed_json for ${what}`, async () => {
        const error = await errorBody(await post(server, '/pets', body))
        assert.equal(error.code, 'malformed_json')
      })
    }

    it('answers 400 for a POST with no body at all', async () => {
      const response = await fetch(`${server.api}/pets`, { method: 'POST', headers: AUTH })
      assert.equal(response.status, 400)
      assert.ok(['malformed_json', 'validation_failed'].includes((await errorBody(response)).code))
    })

    it('answers 415 unsupported_media_type for a body that is not application/json', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const response = await post(server, '/pets', '{"name":"Rex","categoryId":1}', { 'content-type': type })
        assert.equal(response.status, 415, type)
        assert.equal((await errorBody(response)).code, 'unsupported_media_type')
      }
      const charset = await post(server, '/pets', '{"name":"Rex","categoryId":1}', { 'content-type': 'application/json; charset=utf-8' })
      assert.equal(charset.status, 201)
    })

    it('answers 415 unsupported_media_type for a body with a Content-Encoding other than identity, compressed or not', async () => {
      const json = '{"name":"Packed","categoryId":1}'
      const gzipped = await fetch(`${server.api}/pets`, { method: 'POST', headers: { ...JSON_AUTH, 'content-encoding': 'gzip' }, body: gzipSync(json) })
      assert.equal(gzipped.status, 415)
      assert.deepEqual(await errorBody(gzipped), { code: 'unsupported_media_type', message: 'Content-Encoding: must be identity; send the body uncompressed', status: 415 })
      for (const coding of ['gzip', 'GZIP', 'deflate', 'br', 'identity, gzip', 'x-custom']) {
        const response = await post(server, '/pets', json, { 'content-encoding': coding })
        assert.equal(response.status, 415, coding)
        assert.equal((await errorBody(response)).code, 'unsupported_media_type', coding)
      }
      for (const coding of ['identity', 'IDENTITY']) {
        assert.equal((await post(server, '/pets', json, { 'content-encoding': coding })).status, 201, coding)
      }
    })

    it('answers 415 unsupported_media_type for a charset other than utf-8', async () => {
      const json = '{"name":"Caf\u00e9","categoryId":1}'
      for (const type of ['application/json; charset=latin1', 'application/json; charset=ISO-8859-1', 'application/json;charset="utf-16"', 'application/json; charset=utf8', 'application/json; charset=utf-8; charset=latin1']) {
        const response = await post(server, '/pets', json, { 'content-type': type })
        assert.equal(response.status, 415, type)
        assert.deepEqual(await errorBody(response), { code: 'unsupported_media_type', message: 'Content-Type: charset must be utf-8', status: 415 }, type)
      }
      for (const type of ['application/json', 'application/json; charset=UTF-8', 'application/json;charset="utf-8"', 'Application/JSON ; Charset = utf-8']) {
        assert.equal((await post(server, '/pets', json, { 'content-type': type })).status, 201, type)
      }
    })

    it('answers 413 payload_too_large for a body over 16 KiB', async () => {
      const response = await post(server, '/pets', JSON.stringify({ name: 'x'.repeat(17 * 1024), categoryId: 1 }))
      assert.equal(response.status, 413)
      assert.equal((await errorBody(response)).code, 'payload_too_large')
    })

    it('creates nothing on any 4xx', async () => {
      const before = (await (await get(server, '/pets?limit=100')).json() as unknown[]).length
      for (const [, body] of INVALID_BODIES) await post(server, '/pets', body)
      const afterwards = (await (await get(server, '/pets?limit=100')).json() as unknown[]).length
      assert.equal(afterwards, before)
    })
  })
}

for (const backend of backends()) {
  describe(`${backend.name}: POST /v1/pets once an import took the last id`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer({ backend: backend.name })
      await server.store.importPets([{ id: toInt64(9223372036854775806n), name: 'imported', categoryId: 1, status: 'sold' }])
    })
    after(async () => { await server.close() })

    it('creates the animal with id 2^63 - 1, then answers 503 unavailable with Retry-After: 3600, never a random id', async () => {
      const last = await post(server, '/pets', { name: 'last', categoryId: 1 })
      assert.equal(last.status, 201)
      assert.match(await last.text(), /^\{"id":9223372036854775807,/)

      for (const headers of [{}, { 'idempotency-key': 'k1' }, { 'idempotency-key': 'k1' }] as Array<Record<string, string>>) {
        const refused = await post(server, '/pets', { name: 'one too many', categoryId: 1 }, headers)
        assert.equal(refused.status, 503)
        assert.equal(refused.headers.get('retry-after'), '3600', 'retrying soon does not help')
        assert.deepEqual(await errorBody(refused), {
          code: 'unavailable',
          message: 'no id is left for a new animal: 9223372036854775807, the highest, is taken',
          status: 503
        })
      }
      const listed = await (await get(server, '/pets?limit=100')).text()
      assert.deepEqual([...listed.matchAll(/"id":(\d+)/g)].map((match) => match[1]), ['9223372036854775806', '9223372036854775807'])
    })
  })
}
