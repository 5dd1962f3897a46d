import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { PetstoreClient, PetstoreError, isPetstoreError, type Pet, type RetryClock } from '../src/index.js'
import { TEST_KEY, backends, startInjectingProxy, startRedirectingProxy, startTcpProxy, startTestServer, type TestServer } from './server-support.js'

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

interface Canned {
  status: number
  /** Content-Type; default application/json. */
  type?: string
  body?: string
  headers?: Record<string, string>
}

interface FakeApi {
  /** Base URL, ending in /v1. */
  api: string
  /** Method, path and headers of each request received. */
  requests: Array<{ method: string, url: string, headers: IncomingHttpHeaders }>
  close: () => Promise<void>
}

/** A server that answers what no real Pet Store answers: the faults the real service cannot be made to show. */
async function startFakeApi (answer: (method: string, url: string) => Canned): Promise<FakeApi> {
  const requests: FakeApi['requests'] = []
  const fake = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      requests.push({ method: request.method!, url: request.url!, headers: request.headers })
      const canned = answer(request.method!, request.url!)
      response.writeHead(canned.status, { 'content-type': canned.type ?? 'application/json', ...canned.headers })
      response.end(canned.body ?? '')
    })
  })
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve))
  return {
    api: `http://127.0.0.1:${(fake.address() as { port: number }).port}/v1`,
    requests,
    close: async () => { fake.closeAllConnections(); await new Promise((resolve) => fake.close(resolve)) }
  }
}

async function caughtFrom (canned: Canned, call: (client: PetstoreClient) => Promise<unknown>): Promise<PetstoreError> {
  const fake = await startFakeApi(() => canned)
  try {
    return await caught(call(clientOf(fake.api, { maxAttempts: 1 })))
  } finally {
    await fake.close()
  }
}

const REX = '{"id":1,"name":"Rex","categoryId":3,"status":"available"}'
const UNAVAILABLE = '{"code":"unavailable","message":"the database is unavailable; retry later","status":503}'

/** A clock that moves only when the client waits, so a test of waits takes none; `waits` lists them. */
function virtualClock (): RetryClock & { waits: number[] } {
  let now = 0
  const waits: number[] = []
  return { now: () => now, sleep: async (ms) => { waits.push(ms); now += ms }, waits }
}

/** Numbers from 0 to under 1 from a seed (a linear congruential generator): the same spread on every run. */
function seededRandom (seed: number): () => number {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
    return seed / 2 ** 32
  }
}

// One call's retries are these tests' subject: the throttle, which a new client's refused tries close, has tests of its own (adaptive-throttle.test.ts).
const UNTHROTTLED = { throttle: false }

/** A fetch that answers 503 with `Retry-After: retryAfter` to the first try, then an empty page; `at` holds the clock's time of each try. */
function refusedOnce (clock: RetryClock, retryAfter: string): typeof fetch & { at: number[] } {
  const at: number[] = []
  const answer = async (): Promise<Response> => {
    at.push(clock.now())
    return at.length === 1
      ? new Response(UNAVAILABLE, { status: 503, headers: { 'content-type': 'application/json', 'retry-after': retryAfter } })
      : new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return Object.assign(answer, { at })
}

describe('the typed client: an answer that is not the API\'s', () => {
  for (const [what, canned, call] of [
    ['getPet on 200 {}', { status: 200, body: '{}' }, async (c: PetstoreClient) => await c.getPet(1)],
    ['getPet on 200 text/plain "hello"', { status: 200, type: 'text/plain', body: '"hello"' }, async (c: PetstoreClient) => await c.getPet(1)],
    ['getPet on an animal sent as text/plain', { status: 200, type: 'text/plain', body: REX }, async (c: PetstoreClient) => await c.getPet(1)],
    ['getPet on 200 with an Error body', { status: 200, body: '{"code":"internal_error","message":"boom","status":500}' }, async (c: PetstoreClient) => await c.getPet(1)],
    ['getPet on an animal with an unknown status', { status: 200, body: REX.replace('available', 'lost') }, async (c: PetstoreClient) => await c.getPet(1)],
    ['createPet on 200 {}', { status: 200, body: '{}' }, async (c: PetstoreClient) => await c.createPet({ name: 'Rex', categoryId: 3 })],
    ['createPet on 201 with an animal without id', { status: 201, body: '{"name":"Rex","categoryId":3,"status":"available"}' }, async (c: PetstoreClient) => await c.createPet({ name: 'Rex', categoryId: 3 })],
    ['listPets on 200 [{}]', { status: 200, body: '[{}]' }, async (c: PetstoreClient) => await c.listPets()],
    ['listPets on 200 {}', { status: 200, body: '{}' }, async (c: PetstoreClient) => await c.listPets()]
  ] as const) {
    it(`throws invalid_response for ${what}`, async () => {
      const error = await caughtFrom(canned, call)
      assert.equal(error.code, 'invalid_response')
      assert.equal(error.status, canned.status)
    })
  }

  it('throws invalid_response, not a catalogue code, for an error code outside the catalogue', async () => {
    const error = await caughtFrom({ status: 418, body: '{"code":"teapot","message":"short and stout","status":418}' }, async (c) => await c.getPet(1))
    assert.equal(error.code, 'invalid_response')
    assert.equal(error.status, 418)
    assert.match(error.message, /"teapot"/)
  })

  it('throws invalid_response for a Link rel="next" without a cursor, rather than read the first page again', async () => {
    const error = await caughtFrom({ status: 200, body: `[${REX}]`, headers: { link: '</v1/pets?limit=1>; rel="next"' } }, async (c) => await c.listPets({ limit: 1 }))
    assert.equal(error.code, 'invalid_response')
    assert.match(error.message, /cursor/)
  })

  it('takes an animal with a field it does not know: a newer server may add one', async () => {
    const fake = await startFakeApi(() => ({ status: 200, type: 'application/json; charset=utf-8', body: REX.replace('}', ',"tags":[]}') }))
    try {
      const pet = await clientOf(fake.api).getPet(1)
      assert.equal(pet.name, 'Rex')
    } finally {
      await fake.close()
    }
  })
})

describe('the typed client: retries within retryBudgetMs', () => {
  it('retries a 503 past 4 tries by default, the same Idempotency-Key each time, until it succeeds', async () => {
    let tries = 0
    const fake = await startFakeApi(() => ++tries <= 6
      ? { status: 503, headers: { 'retry-after': '0' }, body: UNAVAILABLE }
      : { status: 201, body: REX })
    try {
      const pet = await clientOf(fake.api, UNTHROTTLED).createPet({ name: 'Rex', categoryId: 3 })
      assert.equal(pet.id, 1)
      assert.equal(fake.requests.length, 7)
      assert.equal(new Set(fake.requests.map((request) => request.headers['idempotency-key'])).size, 1)
    } finally {
      await fake.close()
    }
  })

  it('gives up once the next Retry-After would end past the budget, the random share cut to what is left of it', async () => {
    const fake = await startFakeApi(() => ({ status: 503, headers: { 'retry-after': '1' }, body: UNAVAILABLE }))
    const clock = virtualClock()
    try {
      const error = await caught(clientOf(fake.api, { ...UNTHROTTLED, retryBudgetMs: 2_500, clock, random: () => 0.5 }).listPets())
      assert.equal(error.code, 'unavailable')
      assert.equal(fake.requests.length, 3, 'tries at 0, 1.25 and 2.375 s; a fourth, 1 s later, would be past 2.5 s')
      assert.deepEqual(clock.waits, [1_000 + 0.5 * 500, 1_000 + 0.5 * 250], 'the second share is half of the 250 ms left, not of 500')
      assert.ok(clock.now() < 2_500)
    } finally {
      await fake.close()
    }
  })

  it('waits Retry-After plus a random share: a thousand clients refused together come back spread over half a second', async () => {
    const random = seededRandom(40)
    const retries: number[] = []
    for (let i = 0; i < 1_000; i++) {
      const clock = virtualClock()
      const fetch = refusedOnce(clock, '1')
      await clientOf('http://petstore.invalid/v1', { ...UNTHROTTLED, fetch, clock, random }).listPets()
      retries.push(fetch.at[1]!)
    }
    assert.ok(Math.min(...retries) >= 1_000, 'none comes back before Retry-After')
    assert.ok(Math.max(...retries) <= 1_500, 'none waits more than half of it again')
    // In slots of 10 ms, an exact wait puts all thousand in one; spread evenly, each holds about 20.
    const slots = Array.from({ length: 50 }, () => 0)
    for (const at of retries) slots[Math.min(49, Math.floor((at - 1_000) / 10))]!++
    assert.ok(Math.max(...slots) <= 40 && Math.min(...slots) >= 5, `clients per 10 ms: ${slots.join(' ')}`)
  })

  it('adds no share past maxRetryDelayMs, and one of retryDelayMs to a Retry-After of 0', async () => {
    const capped = virtualClock()
    await clientOf('http://petstore.invalid/v1', { ...UNTHROTTLED, fetch: refusedOnce(capped, '1'), clock: capped, random: () => 0.99, maxRetryDelayMs: 1_000 }).listPets()
    assert.deepEqual(capped.waits, [1_000])
    const now = virtualClock()
    await clientOf('http://petstore.invalid/v1', { ...UNTHROTTLED, fetch: refusedOnce(now, '0'), clock: now, random: () => 0.5, retryDelayMs: 200 }).listPets()
    assert.deepEqual(now.waits, [50], 'half of a share of up to 100 ms')
  })
})

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

    it('pets() asks its own baseUrl for every page, never the origin of the Link, and sends the key nowhere else', async () => {
      const elsewhere = await startFakeApi(() => ({ status: 200, body: '[]' }))
      const fresh = await startTestServer({ backend: backend.name, env: { PUBLIC_BASE_URL: elsewhere.api } })
      try {
        const c = clientOf(fresh.api)
        for (let i = 0; i < 5; i++) await c.createPet({ name: `pet ${i}`, categoryId: 1, status: i % 2 === 0 ? 'sold' : 'pending' })
        assert.ok((await fetch(`${fresh.api}/pets?limit=2`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).headers.get('link')?.startsWith(`<${elsewhere.api}/pets?`), 'the server links to its public address')
        const ids: number[] = []
        for await (const pet of c.pets({ limit: 2 })) ids.push(pet.id as number)
        assert.deepEqual(ids, [1, 2, 3, 4, 5])
        const sold: number[] = []
        for await (const pet of c.pets({ limit: 1, status: 'sold' })) sold.push(pet.id as number)
        assert.deepEqual(sold, [1, 3, 5])
        assert.deepEqual(elsewhere.requests, [], 'no request, and so no key, went to the public address')
      } finally {
        await fresh.close()
        await elsewhere.close()
      }
    })

    it('reads the next page of a status filter with listPets(page.next): the same status, the same limit', async () => {
      const fresh = await startTestServer({ backend: backend.name })
      try {
        const c = clientOf(fresh.api)
        const statuses = ['available', 'pending', 'sold'] as const
        for (let i = 0; i < 12; i++) await c.createPet({ name: `pet ${i}`, categoryId: 1, status: statuses[i % 3] })
        const first = await c.listPets({ limit: 2, status: 'pending' })
        assert.deepEqual(first.next, { limit: 2, status: 'pending', cursor: first.cursor })
        const second = await c.listPets(first.next)
        assert.deepEqual(second.pets.map((pet) => [pet.id, pet.status]), [[8, 'pending'], [11, 'pending']])
        assert.equal(second.next, undefined)
        assert.equal(second.cursor, undefined)

        const cursorAlone = await caught(c.listPets({ cursor: first.cursor }))
        assert.equal(cursorAlone.code, 'validation_failed', 'a cursor alone remembers no status: documented')
        assert.match(cursorAlone.message, /status/)
        assert.deepEqual((await c.listPets({ limit: 2, status: 'pending', cursor: first.cursor })).pets, second.pets)
      } finally {
        await fresh.close()
      }
    })

    it('keeps the page size of the first call in listPets(page.next), rather than the server\'s default of 20', async () => {
      const fresh = await startTestServer({ backend: backend.name })
      try {
        const c = clientOf(fresh.api)
        for (let i = 0; i < 30; i++) await c.createPet({ name: `pet ${i}`, categoryId: 1 })
        const first = await c.listPets({ limit: 3 })
        const second = await c.listPets(first.next)
        assert.deepEqual(second.pets.map((pet) => pet.id), [4, 5, 6])
        assert.deepEqual(second.next, { limit: 3, cursor: second.cursor })
        const unlimited = await c.listPets()
        assert.deepEqual(unlimited.next, { cursor: unlimited.cursor }, 'no limit given: the server\'s default goes on')
        assert.equal((await c.listPets(unlimited.next)).pets.length, 10)
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

    it('throws 403 insufficient_scope as a PetstoreError with its code, and never retries it', async () => {
      const readOnly = 'read-only-key-0123456789'
      const fresh = await startTestServer({ backend: backend.name, env: { PETSTORE_READ_ONLY_KEYS: readOnly } })
      try {
        const reader = clientOf(fresh.api, { apiKey: readOnly, maxAttempts: 4 })
        assert.equal((await reader.listPets()).pets.length, 0)
        const refused = await caught(reader.createPet({ name: 'Rex', categoryId: 1 }))
        assert.ok(isPetstoreError(refused, 'insufficient_scope'))
        assert.equal(refused.status, 403)
        assert.equal(refused.message, 'Authorization: this API key lacks pets:write, which createPet needs')
        const creates = fresh.logs().filter((line) => line.msg === 'request' && line.method === 'POST')
        assert.equal(creates.length, 1, 'one request: a 403 is not retried')
      } finally {
        await fresh.close()
      }
    })

    it('reports a server that is not there as network_error after its bounded tries', async () => {
      const { proxy, api } = await startTcpProxy(server.origin)
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
      it(`retries a ${status} after its Retry-After, then succeeds, when its recent tries were accepted`, async () => {
        const proxy = await startInjectingProxy(server.origin, [undefined, { status, code, headers: { 'retry-after': '1' } }])
        try {
          const c = clientOf(proxy.api)
          await c.listPets({ limit: 1 })
          const started = performance.now()
          const page = await c.listPets({ limit: 1 })
          assert.equal(page.pets.length, 1)
          assert.ok(performance.now() - started >= 950, 'waited for Retry-After')
          assert.equal(proxy.seen(), 3, 'one accepted try, one refused, then its retry: the throttle never refuses while the accepted are half the tries')
        } finally {
          await proxy.close()
        }
      })
    }

    for (const [status, code] of [[503, 'unavailable'], [429, 'rate_limited']] as const) {
      it(`gives the Retry-After of a ${status} it does not wait for as retryAfterSeconds, seconds or an HTTP date`, async () => {
        const inTwoMinutes = new Date(Date.now() + 120_000).toUTCString()
        const proxy = await startInjectingProxy(server.origin, [
          { status, code, headers: { 'retry-after': '7' } },
          { status, code, headers: { 'retry-after': inTwoMinutes } }
        ])
        try {
          const c = clientOf(proxy.api, { ...UNTHROTTLED, maxAttempts: 1 })
          const inSeconds = await caught(c.listPets())
          assert.equal(inSeconds.code, code)
          assert.equal(inSeconds.retryAfterSeconds, 7)
          const atDate = await caught(c.listPets())
          assert.ok(atDate.retryAfterSeconds !== undefined && atDate.retryAfterSeconds >= 110 && atDate.retryAfterSeconds <= 120, `${atDate.retryAfterSeconds}`)
        } finally {
          await proxy.close()
        }
      })
    }

    it('gives the X-Request-Id of the answer as requestId, to report an internal_error', async () => {
      const missing = await caught(client.getPet(987654))
      assert.equal(typeof missing.requestId, 'string')
      assert.ok(server.logText().includes(missing.requestId!), 'the id the server logged the request under')
      assert.equal(missing.retryAfterSeconds, undefined)

      const proxy = await startInjectingProxy(server.origin, [{ status: 500, code: 'internal_error', headers: { 'x-request-id': 'req-42' } }])
      try {
        const bug = await caught(clientOf(proxy.api).listPets())
        assert.equal(bug.code, 'internal_error')
        assert.equal(bug.requestId, 'req-42')
      } finally {
        await proxy.close()
      }
    })

    it('stops after maxAttempts and throws the last error', async () => {
      const always = Array.from({ length: 10 }, () => ({ status: 503, code: 'unavailable', headers: { 'retry-after': '0' } }))
      const proxy = await startInjectingProxy(server.origin, always)
      try {
        const error = await caught(clientOf(proxy.api, { ...UNTHROTTLED, maxAttempts: 3 }).createPet({ name: 'Nope', categoryId: 1 }))
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

    describe('behind a proxy that redirects', () => {
      // One fresh server for the five: after each, it still holds the one animal created before them all.
      let fresh: TestServer
      let known: Pet
      before(async () => {
        fresh = await startTestServer({ backend: backend.name })
        known = await clientOf(fresh.api).createPet({ name: 'Known', categoryId: 1 })
      })
      after(async () => { await fresh.close() })

      for (const status of [301, 302, 303, 307, 308]) {
        it(`does not follow a ${status}: createPet and getPet throw invalid_response and create nothing`, async () => {
          const mover = await startRedirectingProxy(fresh.origin, status)
          try {
            const moved = clientOf(mover.api)
            const created = await caught(moved.createPet({ name: 'Moved', categoryId: 1 }))
            assert.equal(created.code, 'invalid_response')
            assert.equal(created.status, status)
            const got = await caught(moved.getPet(known.id))
            assert.equal(got.code, 'invalid_response')
            assert.equal(got.status, status)
            assert.equal(mover.seen(), 2, 'one try each, not followed: a redirect is not retried')
            assert.deepEqual((await clientOf(fresh.api).listPets()).pets, [known])
          } finally {
            await mover.close()
          }
        })
      }
    })

    it('creates exactly one animal when the connection breaks after the server took the create', async () => {
      const fresh = await startTestServer({ backend: backend.name })
      const { proxy, api } = await startTcpProxy(fresh.origin, { keepSent: true })
      proxy.resetAnswers(1)
      try {
        const created = await clientOf(api).createPet({ name: 'Once', categoryId: ABOVE_2_53 })
        const keys = [...proxy.sent().matchAll(/\r\nidempotency-key: *([^\r]*)\r\n/gi)].map((match) => match[1])
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
