import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { PetstoreClient, PetstoreError, isPetstoreError, type Pet } from '../../src/client/index.js'
import { TEST_KEY, backends, startTestServer, type TestServer } from '../helper.js'
import { startInjectingProxy, startResettingProxy } from './fault-proxies.js'

const INT64_MAX = 9223372036854775807n
const ABOVE_2_53 = 9007199254740993n

function clientOf (baseUrl: string, options: Partial<ConstructorParameters<typeof PetstoreClient>[0]> = {}): PetstoreClient {
  return new PetstoreClient({ baseUrl, apiKey: TEST_KEY, retryDelayMs: 10, ...options })
}

async function caught (work: Promise<unknown>): Promise<PetstoreError> {
  try {
    await work
  } catch (err) {
    assert.ok(isPetstoreError(err), `not a PetstoreError: ${String(err)}`)
    return err
  }
  assert.fail('expected a PetstoreError')
}

for (const backend of backends()) {
  describe(`${backend.name}: the typed client`, { skip: backend.skip }, () => {
    let server: TestServer
    let client: PetstoreClient
    before(async () => {
      server = await startTestServer({ backend: backend.name })
      client = clientOf(server.api)
    })
    after(async () => { await server.close() })

    it('creates an animal with the default status and gets it back', async () => {
      const created = await client.createPet({ name: 'Rex 🐕', categoryId: 3 })
      assert.equal(created.status, 'available')
      assert.deepEqual(await client.getPet(created.id), created)
    })

    it('sends and returns int64 categoryIds above 2^53 exactly, as bigints', async () => {
      for (const categoryId of [ABOVE_2_53, INT64_MAX]) {
        const created = await client.createPet({ name: 'Big', categoryId, status: 'sold' })
        assert.equal(created.categoryId, categoryId)
        assert.equal((await client.getPet(created.id)).categoryId, categoryId)
        const listed: Pet[] = []
        for await (const pet of client.pets({ status: 'sold', limit: 100 })) listed.push(pet)
        assert.ok(listed.some((pet) => pet.id === created.id && pet.categoryId === categoryId))
      }
    })

    it('lists one page, and pets() follows Link rel="next" through every animal once', async () => {
      const fresh = await startTestServer({ backend: backend.name })
      try {
        const c = clientOf(fresh.api)
        const statuses = ['available', 'pending', 'sold'] as const
        for (let i = 0; i < 23; i++) await c.createPet({ name: `pet ${i}`, categoryId: i + 1, status: statuses[i % 3] })
        const first = await c.listPets({ limit: 5 })
        assert.equal(first.pets.length, 5)
        assert.ok(first.cursor !== undefined && first.next !== undefined)
        const second = await c.listPets({ limit: 5, cursor: first.cursor })
        assert.equal(second.pets[0]!.id, first.pets[4]!.id as number + 1)

        const ids: number[] = []
        for await (const pet of c.pets({ limit: 4 })) ids.push(pet.id as number)
        assert.deepEqual(ids, Array.from({ length: 23 }, (_, i) => i + 1))
        const pending: string[] = []
        for await (const pet of c.pets({ limit: 2, status: 'pending' })) pending.push(pet.status)
        assert.equal(pending.length, 8)
        assert.ok(pending.every((status) => status === 'pending'))
        assert.equal((await c.listPets({ limit: 100 })).cursor, undefined)
      } finally {
        await fresh.close()
      }
    })

    it('types its arguments from the API schemas: a misspelt field or an unknown status does not compile', async () => {
      // @ts-expect-error categoryID is not a field of NewPet (tsc --noEmit fails if it ever becomes one)
      assert.equal((await caught(client.createPet({ name: 'Typo', categoryID: 1 }))).code, 'validation_failed')
      // @ts-expect-error 'lost' is not a PetStatus
      assert.equal((await caught(client.listPets({ status: 'lost' }))).code, 'validation_failed')
    })

    it('throws one error class with code, status and message, and narrows it by code', async () => {
      const missing = await caught(client.getPet(987654))
      assert.ok(missing instanceof PetstoreError)
      assert.ok(missing.is('not_found'))
      assert.ok(isPetstoreError(missing, 'not_found'))
      assert.ok(!isPetstoreError(missing, 'unauthorized'))
      assert.equal(missing.status, 404)
      assert.match(missing.message, /987654/)

      const invalid = await caught(client.createPet({ name: '   ', categoryId: 1 }))
      assert.equal(invalid.code, 'validation_failed')
      assert.equal(invalid.status, 400)
      assert.match(invalid.message, /^name: /)

      const limit = await caught(client.listPets({ limit: 0 }))
      assert.equal(limit.code, 'validation_failed')

      const stranger = await caught(clientOf(server.api, { apiKey: 'wrong' }).listPets())
      assert.equal(stranger.code, 'unauthorized')
      assert.equal(stranger.status, 401)
      assert.ok(!isPetstoreError(new Error('plain')))
    })

    it('reports a server that is not there as network_error after its bounded tries', async () => {
      const proxy = await startResettingProxy(server.origin, 0)
      const api = proxy.api
      await proxy.close()
      const error = await caught(clientOf(api, { maxAttempts: 2 }).listPets())
      assert.equal(error.code, 'network_error')
      assert.equal(error.status, 0)
    })

    it('gives up on a server that never answers after timeoutMs a try, as network_error', async () => {
      const silent = createServer(() => {})
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
      try {
        const started = performance.now()
        const error = await caught(clientOf(`http://127.0.0.1:${(silent.address() as { port: number }).port}/v1`, { timeoutMs: 300, maxAttempts: 2 }).listPets())
        assert.equal(error.code, 'network_error')
        assert.ok(performance.now() - started < 3000)
      } finally {
        silent.closeAllConnections()
        silent.close()
      }
    })

    for (const [status, code] of [[503, 'unavailable'], [429, 'rate_limited']] as const) {
      it(`retries a ${status} after its Retry-After, then succeeds`, async () => {
        const proxy = await startInjectingProxy(server.origin, [{ status, code, headers: { 'retry-after': '1' } }])
        try {
          const started = performance.now()
          const page = await clientOf(proxy.api).listPets({ limit: 1 })
          assert.equal(page.pets.length, 1)
          assert.ok(performance.now() - started >= 950, 'waited for Retry-After')
          assert.equal(proxy.seen(), 2)
        } finally {
          await proxy.close()
        }
      })
    }

    it('stops after maxAttempts and throws the last error', async () => {
      const always = Array.from({ length: 10 }, () => ({ status: 503, code: 'unavailable', headers: { 'retry-after': '0' } }))
      const proxy = await startInjectingProxy(server.origin, always)
      try {
        const error = await caught(clientOf(proxy.api, { maxAttempts: 3 }).createPet({ name: 'Nope', categoryId: 1 }))
        assert.equal(error.code, 'unavailable')
        assert.equal(error.status, 503)
        assert.equal(proxy.seen(), 3)
        const keys = proxy.idempotencyKeys()
        assert.match(keys[0]!, /^[0-9a-f-]{36}$/)
        assert.deepEqual(keys, [keys[0], keys[0], keys[0]], 'one Idempotency-Key across the tries')
      } finally {
        await proxy.close()
      }
    })

    it('does not wait for a Retry-After longer than maxRetryDelayMs', async () => {
      const proxy = await startInjectingProxy(server.origin, [{ status: 429, code: 'rate_limited', headers: { 'retry-after': '3600' } }])
      try {
        const error = await caught(clientOf(proxy.api, { maxRetryDelayMs: 5000 }).listPets())
        assert.equal(error.code, 'rate_limited')
        assert.equal(proxy.seen(), 1)
      } finally {
        await proxy.close()
      }
    })

    it('creates exactly one animal when the connection breaks after the server took the create', async () => {
      const fresh = await startTestServer({ backend: backend.name })
      const proxy = await startResettingProxy(fresh.origin, 1)
      try {
        const created = await clientOf(proxy.api).createPet({ name: 'Once', categoryId: ABOVE_2_53 })
        const keys = proxy.idempotencyKeys()
        assert.equal(keys.length, 2, 'the create was sent twice')
        assert.equal(keys[0], keys[1], 'with the same Idempotency-Key')
        const all = (await clientOf(fresh.api).listPets({ limit: 100 })).pets
        assert.deepEqual(all, [created])
        assert.equal(created.categoryId, ABOVE_2_53)
      } finally {
        await proxy.close()
        await fresh.close()
      }
    })
  })
}
