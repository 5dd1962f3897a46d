/**
 * Client-side throttling (src/adaptive-throttle.ts) against the real service: one that refuses every
 * request behind a key (MAX_QUEUE_DELAY=0: 503, Retry-After: 1), and one that accepts. What reached
 * the service is counted by the service itself (`petstore_http_refusals_total`) or by a proxy.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PetstoreClient, PetstoreError, isPetstoreError, type RetryClock } from '../src/index.js'
import { TEST_KEY, startInjectingProxy, startTcpProxy, startTestServer, type Injected, type TestServer } from './server-support.js'

const REFUSED: Injected = { status: 503, code: 'unavailable', headers: { 'retry-after': '1' } }

function clientOf (baseUrl: string, options: Partial<ConstructorParameters<typeof PetstoreClient>[0]> = {}): PetstoreClient {
  return new PetstoreClient({ baseUrl, apiKey: TEST_KEY, ...options })
}

/** The error a call settles with, and whether it settled before the event loop's next turn: before any answer could arrive. */
async function outcomeOf (call: Promise<unknown>): Promise<{ error: PetstoreError, atOnce: boolean }> {
  let settled = false
  const settling = call.then(() => assert.fail('expected a PetstoreError'), (err: unknown) => {
    settled = true
    assert.ok(isPetstoreError(err), `not a PetstoreError: ${String(err)}`)
    return err
  })
  const atOnce = await new Promise<boolean>((resolve) => setImmediate(() => resolve(settled)))
  return { error: await settling, atOnce }
}

/** Requests the service refused for MAX_QUEUE_DELAY=0 so far: one per try that reached it. */
async function refusals (server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  return Number(/^petstore_http_refusals_total\{reason="forced"\} (\d+)$/m.exec(text)?.[1])
}

/** A clock the test sets; the client's waits move it. */
function setClock (): RetryClock & { at: number } {
  const clock = { at: 0, now: () => clock.at, sleep: async (ms: number) => { clock.at += ms } }
  return clock
}

describe('the typed client against a service that refuses every request', () => {
  let server: TestServer
  before(async () => { server = await startTestServer({ env: { MAX_QUEUE_DELAY: '0' } }) })
  after(async () => { await server.close() })

  it('sends a few of 200 calls, and fails the rest at once as throttled, with no request', async () => {
    // One try a call, so that each call is one request or none.
    const client = clientOf(server.api, { maxAttempts: 1 })
    const before = await refusals(server)
    const outcomes = []
    for (let i = 0; i < 200; i++) outcomes.push(await outcomeOf(client.listPets()))
    const sent = outcomes.filter(({ error }) => error.code === 'unavailable')
    const throttled = outcomes.filter(({ error }) => error.code === 'throttled')
    assert.equal(sent.length + throttled.length, 200)
    assert.equal(await refusals(server) - before, sent.length, 'the service received the unavailable calls, and no other')
    // The nth call goes out with probability 1/n: 5.9 of 200 on average, 21 or more once in 60 million runs.
    assert.ok(sent.length >= 1 && sent.length <= 20, `${sent.length} sent`)
    assert.equal(outcomes[0]!.error.code, 'unavailable', 'a client with no history sends')
    for (const { error, atOnce } of throttled) {
      assert.ok(atOnce, 'settled before any answer could arrive')
      assert.equal(error.status, 0)
      assert.equal(error.requestId, undefined)
      assert.equal(error.retryAfterSeconds, undefined)
      assert.match(error.message, /^GET \/v1\/pets: not sent: only 0 of this client's \d+ tries in the last 2 minutes were accepted/)
    }
    assert.match(throttled.at(-1)!.error.message, / 200 tries /, 'a throttled try counts as a try')
  })

  it('ends a call that retries by default as throttled after a few tries, its Retry-After waits included', async () => {
    const before = await refusals(server)
    const started = performance.now()
    const { error } = await outcomeOf(clientOf(server.api).createPet({ name: 'Rex', categoryId: 1 }))
    const sent = await refusals(server) - before
    assert.equal(error.code, 'throttled')
    assert.ok(isPetstoreError(error.cause, 'unavailable'), 'the refusal its retry followed')
    // Its nth try goes out with probability 1/n: 1.7 tries on average, 10 or more once in 3.6 million calls (1/10!).
    assert.ok(sent >= 1 && sent <= 9, `${sent} tries sent`)
    assert.ok(performance.now() - started < 9 * 1_500, 'no more than its sent tries\' waits: not the 30 s of retryBudgetMs')
  })

  it('sends every call with throttle: false', async () => {
    const client = clientOf(server.api, { maxAttempts: 1, throttle: false })
    const before = await refusals(server)
    for (let i = 0; i < 50; i++) assert.equal((await outcomeOf(client.listPets())).error.code, 'unavailable')
    assert.equal(await refusals(server) - before, 50)
  })

  it('counts each second for 2 minutes: a throttled try is a try, and a window without tries lets the next one go', async () => {
    // random 0: any chance of refusal refuses, so each step is certain.
    const clock = setClock()
    const client = clientOf(server.api, { maxAttempts: 1, clock, random: () => 0 })
    const before = await refusals(server)
    const codes = []
    for (const at of [0, 0, 119_999, 120_000, 360_000]) {
      clock.at = at
      codes.push((await outcomeOf(client.listPets())).error.code)
    }
    assert.deepEqual(codes, [
      'unavailable', // no history
      'throttled', // 1 try, 0 accepted: 1/2
      'throttled', // the try of second 0 still in the window
      'throttled', // second 0 forgotten, but the throttled try of second 119 counts
      'unavailable' // seconds 241 to 360: nothing
    ])
    assert.equal(await refusals(server) - before, 2)
  })
})

describe('the typed client against a service that accepts', () => {
  let server: TestServer
  before(async () => { server = await startTestServer() })
  after(async () => { await server.close() })

  it('throttles none of 120 calls, 4xx answers and calls in flight together included', async () => {
    const client = clientOf(server.api, { maxAttempts: 1 })
    const codes = []
    // A 404 is an answer the service accepted: only 429 and 503 are refusals.
    for (let i = 0; i < 100; i++) codes.push((await outcomeOf(client.getPet(1_000 + i))).error.code)
    // 20 at once: no spike the service would refuse part of (its admission stage is on, as shipped).
    const together = await Promise.all(Array.from({ length: 20 }, async (_, i) => await client.createPet({ name: `pet ${i}`, categoryId: 1 })))
    assert.deepEqual(new Set(codes), new Set(['not_found']))
    assert.equal(new Set(together.map((pet) => pet.id)).size, 20)
  })

  it('counts no try that got no answer: the retry of a create whose connection broke goes out', async () => {
    const { proxy, api } = await startTcpProxy(server.origin)
    proxy.resetAnswers(1)
    try {
      // random 0 refuses at any chance: counted as refused, the broken try would make it 1/2.
      const created = await clientOf(api, { random: () => 0, retryDelayMs: 10 }).createPet({ name: 'Once', categoryId: 1 })
      assert.equal((await server.store.findPet(created.id))?.name, 'Once')
    } finally {
      await proxy.close()
    }
  })

  it('sends until its tries pass twice its accepted ones (K = 2), then throttles', async () => {
    const proxy = await startInjectingProxy(server.origin, [undefined, undefined, REFUSED, REFUSED, REFUSED, REFUSED])
    try {
      const client = clientOf(proxy.api, { maxAttempts: 1, random: () => 0 })
      await client.listPets()
      await client.listPets()
      const codes = []
      for (let i = 0; i < 4; i++) codes.push((await outcomeOf(client.listPets())).error)
      assert.deepEqual(codes.map((error) => error.code), ['unavailable', 'unavailable', 'unavailable', 'throttled'], '3, 4 and 5 tries for 2 accepted: (tries - 2 × 2) / (tries + 1) ≤ 0')
      assert.match(codes[3]!.message, /only 2 of this client's 6 tries/)
      assert.equal(proxy.seen(), 5)
    } finally {
      await proxy.close()
    }
  })
})
