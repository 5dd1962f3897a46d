/**
 * The packed client's built code in Chromium, loaded as it ships (an import map names
 * lossless-json, no bundler): a page on an origin of CORS_ORIGINS calls the real server.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join, normalize } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { TEST_KEY, chromiumMissing, launchChromium, startTestServer, type TestServer } from './server-support.js'
import { packClient, run, type Packed } from './packed.js'

const missing = chromiumMissing()
const skip = missing === false ? false : `client browser tests skipped: ${missing}`

// The kind of key a page may hold: every visitor can read it.
const READ_ONLY_KEY = 'page-read-only-key-0123'

const LOSSLESS_JSON = dirname(fileURLToPath(import.meta.resolve('lossless-json')))

const PAGE = `<!doctype html>
<title>shop</title>
<script type="importmap">{ "imports": { "lossless-json": "/lossless-json/index.js" } }</script>
<script type="module">
  import * as petstore from '/client/dist/index.js'
  window.petstore = petstore
</script>`

/** Serves the page, the unpacked client under /client/ and lossless-json's ES modules under /lossless-json/. */
async function startPageServer (unpacked: string): Promise<{ origin: string, server: Server }> {
  const roots: Record<string, string> = { client: unpacked, 'lossless-json': LOSSLESS_JSON }
  const server = createServer((request, response) => {
    const [, root, ...rest] = new URL(request.url ?? '/', 'http://page').pathname.split('/')
    if (root === '') return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
    const base = roots[root ?? '']
    const file = base === undefined ? undefined : normalize(join(base, ...rest))
    if (file === undefined || !file.startsWith(base!) || !existsSync(file)) return response.writeHead(404).end()
    response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(readFileSync(file))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

describe('the packed client in Chromium', { skip }, () => {
  let packed: Packed
  let pages: { origin: string, server: Server }
  let api: TestServer
  let browser: Browser
  let page: Page
  const failures: string[] = []

  before(async () => {
    packed = await packClient()
    await run('tar', ['-xzf', packed.tarball, '-C', packed.dir])
    pages = await startPageServer(join(packed.dir, 'package'))
    api = await startTestServer({ env: { CORS_ORIGINS: pages.origin, PETSTORE_READ_ONLY_KEYS: READ_ONLY_KEY } })
    browser = await launchChromium()
    page = await browser.newPage()
    page.on('pageerror', (err) => failures.push(err.message))
    page.on('requestfailed', (request) => failures.push(`${request.url()}: ${request.failure()?.errorText ?? ''}`))
    await page.goto(`${pages.origin}/`)
    await page.waitForFunction(() => 'petstore' in globalThis)
  })
  after(async () => {
    await browser?.close()
    await api?.close()
    pages?.server.close()
    if (packed !== undefined) rmSync(packed.dir, { recursive: true, force: true })
  })

  it('creates, gets and lists animals across origins, int64 values exact, with no Node built-in', async () => {
    const outcome = await page.evaluate(async ({ baseUrl, apiKey }) => {
      const { PetstoreClient } = (globalThis as unknown as { petstore: typeof import('../src/index.js') }).petstore
      const client = new PetstoreClient({ baseUrl, apiKey, maxAttempts: 1 })
      const created = await client.createPet({ name: 'Browser Rex', categoryId: 9007199254740993n })
      const got = await client.getPet(created.id)
      const first = await client.listPets({ limit: 1 })
      await client.createPet({ name: 'Browser Tom', categoryId: 1 })
      const names: string[] = []
      for await (const pet of client.pets({ limit: 1 })) names.push(pet.name)
      // No named function in here: tsx would wrap it in a helper the page does not have.
      const [createdId, gotId] = [created, got].map((pet) => `${typeof pet.categoryId} ${pet.categoryId}`)
      return { created: createdId, got: gotId, firstPage: first.pets.length, hasNext: first.next !== undefined, names }
    }, { baseUrl: api.api, apiKey: TEST_KEY })
    assert.deepEqual(outcome, {
      created: 'bigint 9007199254740993',
      got: 'bigint 9007199254740993',
      firstPage: 1,
      hasNext: false,
      names: ['Browser Rex', 'Browser Tom']
    })
    assert.deepEqual(failures, [])
  })

  it('throws a PetstoreError with the answer\'s code, status and exposed X-Request-Id', async () => {
    const outcome = await page.evaluate(async ({ baseUrl, apiKey }) => {
      const { PetstoreClient, isPetstoreError } = (globalThis as unknown as { petstore: typeof import('../src/index.js') }).petstore
      try {
        await new PetstoreClient({ baseUrl, apiKey }).getPet(999999)
        return 'no error'
      } catch (err) {
        return isPetstoreError(err, 'not_found') ? { code: err.code, status: err.status, requestId: typeof err.requestId } : String(err)
      }
    }, { baseUrl: api.api, apiKey: TEST_KEY })
    assert.deepEqual(outcome, { code: 'not_found', status: 404, requestId: 'string' })
  })

  it('lists animals with a read-only key on an allowed origin, and reads the 403 when it tries to create', async () => {
    const outcome = await page.evaluate(async ({ baseUrl, apiKey }) => {
      const { PetstoreClient, isPetstoreError } = (globalThis as unknown as { petstore: typeof import('../src/index.js') }).petstore
      const client = new PetstoreClient({ baseUrl, apiKey })
      const listed = (await client.listPets({ limit: 100 })).pets.length
      // The bare answer too: CORS lets the page read its status, body and exposed headers.
      const raw = await fetch(`${baseUrl}/pets`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' })
      const body = await raw.json() as unknown
      try {
        await client.createPet({ name: 'Page Rex', categoryId: 1 })
        return 'created'
      } catch (err) {
        if (!isPetstoreError(err, 'insufficient_scope')) return String(err)
        return { listed, code: err.code, status: err.status, message: err.message, rawStatus: raw.status, body, requestId: typeof raw.headers.get('x-request-id') }
      }
    }, { baseUrl: api.api, apiKey: READ_ONLY_KEY })
    assert.deepEqual(outcome, {
      listed: 2,
      code: 'insufficient_scope',
      status: 403,
      message: 'Authorization: this API key lacks pets:write, which createPet needs',
      rawStatus: 403,
      body: { code: 'insufficient_scope', message: 'Authorization: this API key lacks pets:write, which createPet needs', status: 403 },
      requestId: 'string'
    })
    assert.deepEqual(failures, [])
  })
})
