import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { sweepIdempotencyKeys } from '../../src/process/idempotency-sweeper.js'
import { TEST_KEY } from '../support/constants.js'
import { backends, createTestDatabase, errorBody, post, startTestServer, type TestServer } from '../support/helper.js'
import { query } from '../support/database.js'
import { startHalfSentCreate } from '../support/raw-http.js'

const OTHER_KEY = 'other-key-0123456789abcdef'
const DAY_MS = 24 * 60 * 60 * 1000

for (const backend of backends()) {
  describe(`${backend.name}: POST /v1/pets with Idempotency-Key`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => {
      server = await startTestServer({ backend: backend.name, env: { PETSTORE_API_KEYS: `${TEST_KEY},${OTHER_KEY}` } })
    })
    after(async () => { await server.close() })

    const keyed = (key: string, apiKey = TEST_KEY): Record<string, string> =>
      ({ 'idempotency-key': key, authorization: `Bearer ${apiKey}` })

    it('replays the first response for the same key and body: same id, 201, Idempotent-Replayed: true', async () => {
      const first = await post(server, '/pets', { name: 'Rex', categoryId: 1 }, keyed('replay-1'))
      assert.equal(first.status, 201)
      assert.equal(first.headers.get('idempotent-replayed'), null)
      const created = await first.json() as { id: number }
      const again = await post(server, '/pets', { name: 'Rex', categoryId: 1 }, keyed('replay-1'))
      assert.equal(again.status, 201)
      assert.equal(again.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(await again.json(), created)
      assert.equal(again.headers.get('location'), first.headers.get('location'))
    })

    it('takes the same JSON value with other key order and white space as the same body', async () => {
      const first = await post(server, '/pets', '{"name":"Tom","categoryId":2,"status":"sold"}', keyed('order-1'))
      const again = await post(server, '/pets', ' {\n  "status" : "sold",\t"categoryId": 2, "name":"Tom" }\n', keyed('order-1'))
      assert.equal(again.status, 201)
      assert.equal(again.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(await again.json(), await first.json())
    })

    it('answers 422 idempotency_key_reused for the same key with another body, and creates nothing', async () => {
      const first = await post(server, '/pets', { name: 'Kit', categoryId: 3 }, keyed('reused-1'))
      assert.equal(first.status, 201)
      for (const body of [{ name: 'Kat', categoryId: 3 }, { name: 'Kit', categoryId: 4 }, { name: 'Kit', categoryId: 3, status: 'sold' }]) {
        const response = await post(server, '/pets', body, keyed('reused-1'))
        assert.equal(response.status, 422)
        assert.equal((await errorBody(response)).code, 'idempotency_key_reused')
      }
      const replay = await post(server, '/pets', { name: 'Kit', categoryId: 3 }, keyed('reused-1'))
      assert.equal(replay.headers.get('idempotent-replayed'), 'true')
    })

    it('answers 409 idempotency_conflict while the first request is still in flight, then replays it', async () => {
      const body = JSON.stringify({ name: 'Slow', categoryId: 5 })
      const slow = await startHalfSentCreate(server.origin, body, 'flight-1')
      const racing = await post(server, '/pets', body, keyed('flight-1'))
      if (racing.status !== 409) slow.abandon()
      assert.equal(racing.status, 409)
      assert.equal((await errorBody(racing)).code, 'idempotency_conflict')
      const first = await slow.finish()
      assert.equal(first.status, 201)
      const again = await post(server, '/pets', body, keyed('flight-1'))
      assert.equal(again.status, 201)
      assert.equal(again.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(await again.json(), JSON.parse(first.body))
    })

    it('frees the key when the first request is abandoned mid-body', async () => {
      const body = JSON.stringify({ name: 'Gone', categoryId: 6 })
      const abandoned = await startHalfSentCreate(server.origin, body, 'abandoned-1')
      abandoned.abandon()
      await sleep(100)
      const response = await post(server, '/pets', body, keyed('abandoned-1'))
      assert.equal(response.status, 201)
      assert.equal(response.headers.get('idempotent-replayed'), null)
    })

    it('frees the key when the first request is refused (413, 415, 400)', async () => {
      assert.equal((await post(server, '/pets', { name: 'x'.repeat(20_000), categoryId: 1 }, keyed('refused-1'))).status, 413)
      assert.equal((await post(server, '/pets', '{"name":"Ok","categoryId":1}', { ...keyed('refused-1'), 'content-type': 'text/plain' })).status, 415)
      assert.equal((await post(server, '/pets', { name: '', categoryId: 1 }, keyed('refused-1'))).status, 400)
      const response = await post(server, '/pets', { name: 'Ok', categoryId: 1 }, keyed('refused-1'))
      assert.equal(response.status, 201)
      assert.equal(response.headers.get('idempotent-replayed'), null)
    })

    it('answers 400 for a key longer than 255 characters, and takes one of 255', async () => {
      const response = await post(server, '/pets', { name: 'Long', categoryId: 1 }, keyed('k'.repeat(256)))
      assert.equal(response.status, 400)
      const body = await errorBody(response)
      assert.equal(body.code, 'validation_failed')
      assert.equal(body.message, 'Idempotency-Key: must be sent once, 1 to 255 characters')
      assert.equal((await post(server, '/pets', { name: 'Long', categoryId: 1 }, keyed('k'.repeat(255)))).status, 201)
    })

    it('counts the length of a quoted key without its quotes: 255 characters are taken, 256 are a 400', async () => {
      const key = 'q'.repeat(255)
      const first = await post(server, '/pets', { name: 'Quoted', categoryId: 1 }, keyed(`"${key}"`))
      assert.equal(first.status, 201, await first.clone().text())
      const bare = await post(server, '/pets', { name: 'Quoted', categoryId: 1 }, keyed(key))
      assert.equal(bare.status, 201)
      assert.equal(bare.headers.get('idempotent-replayed'), 'true', 'the quoted and the bare key are one key')
      for (const tooLong of [`"${'q'.repeat(256)}"`, '""']) {
        const response = await post(server, '/pets', { name: 'Quoted', categoryId: 1 }, keyed(tooLong))
        assert.equal(response.status, 400)
        assert.equal((await errorBody(response)).message, 'Idempotency-Key: must be sent once, 1 to 255 characters')
      }
    })

    it('creates a new animal for the same key sent with another API key', async () => {
      const mine = await (await post(server, '/pets', { name: 'Shared', categoryId: 7 }, keyed('shared-1'))).json() as { id: number }
      const theirs = await post(server, '/pets', { name: 'Shared', categoryId: 7 }, keyed('shared-1', OTHER_KEY))
      assert.equal(theirs.status, 201)
      assert.equal(theirs.headers.get('idempotent-replayed'), null)
      assert.notEqual((await theirs.json() as { id: number }).id, mine.id)
    })

    it('creates anew once the key is older than 24 h, and the sweep deletes only expired keys', async () => {
      const first = await (await post(server, '/pets', { name: 'Old', categoryId: 8 }, keyed('expired-1'))).json() as { id: number }
      await post(server, '/pets', { name: 'Fresh', categoryId: 8 }, keyed('fresh-1'))
      await query(server.database.url, 'UPDATE idempotency_keys SET created_at = created_at - ? WHERE key = ?', [DAY_MS + 1000, 'expired-1'])
      const later = await post(server, '/pets', { name: 'Old', categoryId: 8 }, keyed('expired-1'))
      assert.equal(later.status, 201)
      assert.equal(later.headers.get('idempotent-replayed'), null)
      assert.notEqual((await later.json() as { id: number }).id, first.id)

      await query(server.database.url, 'UPDATE idempotency_keys SET created_at = created_at - ? WHERE key = ?', [DAY_MS + 1000, 'expired-1'])
      const swept = await sweepIdempotencyKeys(server.store)
      assert.equal(swept, 1)
      const left = (await query(server.database.url, 'SELECT key FROM idempotency_keys')).map((row) => row.key)
      assert.ok(!left.includes('expired-1'))
      assert.ok(left.includes('fresh-1'))
      const replay = await post(server, '/pets', { name: 'Fresh', categoryId: 8 }, keyed('fresh-1'))
      assert.equal(replay.headers.get('idempotent-replayed'), 'true')
    })
  })

  describe(`${backend.name}: Idempotency-Key across a restart`, { skip: backend.skip }, () => {
    it('replays after the service restarts on the same database', async () => {
      const database = await createTestDatabase(backend.name)
      try {
        const first = await startTestServer({ backend: backend.name, database })
        const created = await post(first, '/pets', { name: 'Durable', categoryId: 9 }, { 'idempotency-key': 'restart-1' })
        assert.equal(created.status, 201)
        const pet = await created.json()
        await first.close()

        const second = await startTestServer({ backend: backend.name, database })
        try {
          const again = await post(second, '/pets', { categoryId: 9, name: 'Durable' }, { 'idempotency-key': 'restart-1' })
          assert.equal(again.status, 201)
          assert.equal(again.headers.get('idempotent-replayed'), 'true')
          assert.deepEqual(await again.json(), pet)
        } finally {
          await second.close()
        }
      } finally {
        await database.drop()
      }
    })
  })
}
