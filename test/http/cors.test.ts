import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { Browser } from 'playwright-core'
import { chromiumMissing, launchChromium } from '../support/chromium.js'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, JSON_AUTH, errorBody, startTestServer, type TestServer } from '../support/helper.js'

const SHOP = 'https://shop.example'
const EXPOSED = 'Link, Location, Retry-After, X-Request-Id, Idempotent-Replayed, RateLimit, RateLimit-Policy, Deprecation, Sunset'
const PREFLIGHT = { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,idempotency-key' }

/** The CORS headers of a response, by lower-case name. */
function corsHeaders (response: Response): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')))
}

describe('CORS with CORS_ORIGINS', () => {
  let server: TestServer
  before(async () => { server = await startTestServer({ env: { CORS_ORIGINS: `http://localhost:3000,${SHOP}`, RATE_LIMIT: '100' } }) })
  after(async () => { await server.close() })

  it('answers a preflight from a named origin 204 before authentication, with the methods, headers and max age', async () => {
    for (const path of ['/pets', '/pets/1']) {
      const response = await fetch(`${server.api}${path}`, { method: 'OPTIONS', headers: PREFLIGHT })
      assert.equal(response.status, 204, path)
      assert.deepEqual(corsHeaders(response), {
        'access-control-allow-origin': SHOP,
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, X-Request-Id',
        'access-control-expose-headers': EXPOSED,
        'access-control-max-age': '600'
      }, path)
      assert.equal(response.headers.get('vary'), 'Origin')
      assert.equal(await response.text(), '')
    }
  })

  it('gives a named origin its CORS headers on answers and on errors, so a page can read the Error body', async () => {
    const headers = { ...JSON_AUTH, origin: SHOP }
    const created = await fetch(`${server.api}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'Cors', categoryId: 1 }) })
    const listed = await fetch(`${server.api}/pets`, { headers })
    const unauthorized = await fetch(`${server.api}/pets`, { headers: { origin: SHOP } })
    const invalid = await fetch(`${server.api}/pets?limit=0`, { headers })
    const gone = await fetch(`${server.api}/pets/999999`, { headers })
    for (const [response, status] of [[created, 201], [listed, 200], [unauthorized, 401], [invalid, 400], [gone, 404]] as const) {
      assert.equal(response.status, status)
      assert.deepEqual(corsHeaders(response), { 'access-control-allow-origin': SHOP, 'access-control-expose-headers': EXPOSED }, String(status))
      assert.match(response.headers.get('vary') ?? '', /\bOrigin\b/, String(status))
    }
    assert.equal((await errorBody(unauthorized)).code, 'unauthorized')
  })

  it('sends no CORS header to an origin not named, nor to a request without Origin; its preflight keeps its answer', async () => {
    for (const origin of ['https://evil.example', 'https://shop.example.evil.example', 'http://shop.example', `${SHOP}, https://evil.example`]) {
      const answer = await fetch(`${server.api}/pets`, { headers: { ...AUTH, origin } })
      assert.equal(answer.status, 200)
      assert.deepEqual(corsHeaders(answer), {}, origin)
      // Every answer varies by Origin, so a cache never hands one origin's answer to another.
      assert.equal(answer.headers.get('vary'), 'Origin')
      const withoutKey = await fetch(`${server.api}/pets`, { method: 'OPTIONS', headers: { ...PREFLIGHT, origin } })
      assert.equal(withoutKey.status, 401, origin)
      assert.deepEqual(corsHeaders(withoutKey), {})
      const withKey = await fetch(`${server.api}/pets`, { method: 'OPTIONS', headers: { ...PREFLIGHT, ...AUTH, origin } })
      assert.equal(withKey.status, 405, origin)
      assert.equal(withKey.headers.get('allow'), 'GET, POST')
    }
    assert.deepEqual(corsHeaders(await fetch(`${server.api}/pets`, { headers: AUTH })), {})
  })

  it('answers an OPTIONS from a named origin that is no preflight (no Access-Control-Request-Method) as before: 401, then 405 with Allow', async () => {
    const withoutKey = await fetch(`${server.api}/pets`, { method: 'OPTIONS', headers: { origin: SHOP } })
    assert.equal(withoutKey.status, 401)
    const withKey = await fetch(`${server.api}/pets/1`, { method: 'OPTIONS', headers: { ...AUTH, origin: SHOP } })
    assert.equal(withKey.status, 405)
    assert.equal(withKey.headers.get('allow'), 'GET')
    assert.equal((await errorBody(withKey)).code, 'method_not_allowed')
  })

  it('keeps an OPTIONS on an unknown path unknown: 401 without a key, 404 with one, whatever its body', async () => {
    assert.equal((await fetch(`${server.api}/nothing`, { method: 'OPTIONS' })).status, 401)
    const withKey = await fetch(`${server.api}/nothing`, { method: 'OPTIONS', headers: JSON_AUTH, body: '{not json' })
    assert.equal((await errorBody(withKey)).code, 'not_found')
    assert.equal((await fetch(`${server.origin}/nothing`, { method: 'OPTIONS' })).status, 404)
  })

  it('answers a preflight before the rate limit too: it carries no key to count', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${server.api}/pets`, { method: 'OPTIONS', headers: PREFLIGHT })
      assert.equal(response.status, 204)
      assert.equal(response.headers.get('ratelimit'), null)
    }
  })
})

describe('CORS without CORS_ORIGINS', () => {
  let server: TestServer
  before(async () => { server = await startTestServer() })
  after(async () => { await server.close() })

  it('sends no CORS header at all, and a preflight gets the answer of any OPTIONS', async () => {
    const answer = await fetch(`${server.api}/pets`, { headers: { ...AUTH, origin: SHOP } })
    assert.deepEqual(corsHeaders(answer), {})
    assert.equal(answer.headers.get('vary'), null)
    const preflight = await fetch(`${server.api}/pets`, { method: 'OPTIONS', headers: PREFLIGHT })
    assert.equal(preflight.status, 401)
    assert.deepEqual(corsHeaders(preflight), {})
  })
})

const missing = chromiumMissing()
const skip = missing === false ? false : `CORS browser tests skipped: ${missing}`

/** A page server: one empty HTML page, the origin a script in it runs on. */
async function startPageServer (): Promise<{ origin: string, server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>shop</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

interface Outcome { status?: number, body?: unknown, location?: string | null, requestId?: string | null, failed?: string }

describe('CORS in a real browser: a shop page on another origin', { skip }, () => {
  let shop: { origin: string, server: Server }
  let stranger: { origin: string, server: Server }
  let api: TestServer
  let browser: Browser

  before(async () => {
    shop = await startPageServer()
    stranger = await startPageServer()
    // Same host, other ports: three origins.
    api = await startTestServer({ env: { CORS_ORIGINS: shop.origin } })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await api?.close()
    shop?.server.close()
    stranger?.server.close()
  })

  /** Runs fetch(url, init) in a page of `origin` and tells what the page could see of it. */
  async function fetchFrom (origin: string, url: string, init: RequestInit): Promise<Outcome> {
    const page = await browser.newPage()
    try {
      await page.goto(`${origin}/`)
      return await page.evaluate(async ({ url, init }) => {
        try {
          const response = await fetch(url, init)
          return { status: response.status, body: await response.json(), location: response.headers.get('location'), requestId: response.headers.get('x-request-id') }
        } catch (err) {
          return { failed: String(err) }
        }
      }, { url, init: init as Record<string, unknown> })
    } finally {
      await page.close()
    }
  }

  it('creates an animal and lists it from the named origin, reading the body and the exposed headers', async () => {
    const created = await fetchFrom(shop.origin, `${api.api}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', 'idempotency-key': 'shop-1' },
      body: JSON.stringify({ name: 'Browser Rex', categoryId: 5 })
    })
    assert.equal(created.status, 201, JSON.stringify(created))
    const pet = created.body as { id: number, name: string }
    assert.equal(pet.name, 'Browser Rex')
    assert.match(created.location ?? '', new RegExp(`/v1/pets/${pet.id}$`))
    assert.ok(created.requestId)

    const listed = await fetchFrom(shop.origin, `${api.api}/pets?limit=100`, { headers: AUTH })
    assert.equal(listed.status, 200, JSON.stringify(listed))
    assert.ok((listed.body as Array<{ id: number }>).some((animal) => animal.id === pet.id))
  })

  it('lets the named origin read an Error body: a 401 without a key', async () => {
    const outcome = await fetchFrom(shop.origin, `${api.api}/pets`, {})
    assert.equal(outcome.status, 401)
    assert.equal((outcome.body as { code: string }).code, 'unauthorized')
  })

  it('is refused by the browser from an origin not named: fetch rejects, and nothing is created', async () => {
    const count = async (): Promise<number> => (await (await fetch(`${api.api}/pets?limit=100`, { headers: AUTH })).json() as unknown[]).length
    const countBefore = await count()
    const created = await fetchFrom(stranger.origin, `${api.api}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Stranger', categoryId: 5 })
    })
    assert.match(created.failed ?? '', /TypeError/, JSON.stringify(created))
    const listed = await fetchFrom(stranger.origin, `${api.api}/pets`, { headers: AUTH })
    assert.match(listed.failed ?? '', /TypeError/, JSON.stringify(listed))
    assert.equal(await count(), countBefore)
  })
})
