import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { ERROR_CATALOGUE } from '../../src/schemas/error.js'
import { chromiumMissing, launchChromium } from '../support/chromium.js'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, post, skippedFile, startTestServer, type TestServer } from '../support/helper.js'

const missing = chromiumMissing()
const skip = missing === false ? false : `docs page tests skipped: ${missing}`
if (skip !== false) skippedFile(skip)

describe('GET /docs in a real browser', { skip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  const blocked: string[] = []
  const requested: string[] = []
  const apiRequests: Array<{ url: string, authorization: string | undefined }> = []

  before(async () => {
    server = await startTestServer()
    assert.equal((await post(server, '/pets', { name: 'Docs Rex', categoryId: 3 })).status, 201)
    browser = await launchChromium()
    const context = await browser.newContext({ viewport: { width: 1280, height: 1600 } })
    // No network: only the server under test answers; anything else (a CDN, a validator badge) is refused.
    await context.route('**/*', async (route) => {
      const url = route.request().url()
      if (url.startsWith(`${server.origin}/`)) return await route.continue()
      blocked.push(url)
      return await route.abort()
    })
    page = await context.newPage()
    page.on('request', (request) => {
      requested.push(request.url())
      if (request.url().startsWith(`${server.api}/pets`)) apiRequests.push({ url: request.url(), authorization: request.headers().authorization })
    })
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it('loads from the server alone, titled with the service\'s name, without top bar, from /v1/openapi.json', async () => {
    const response = await page.goto(`${server.origin}/docs`)
    assert.equal(response?.status(), 200)
    for (const operation of ['listPets', 'createPet', 'getPet']) {
      await page.locator(`#operations-pets-${operation}`).waitFor({ timeout: 15_000 })
    }
    assert.equal(await page.title(), 'Pet Store API reference')
    assert.equal((await page.locator('.info .title').innerText()).split('\n')[0]!.trim(), 'Pet Store')
    // No top bar: neither Fastify's logo nor a box to load another document.
    assert.equal(await page.locator('.topbar, .download-url-input, input[type="text"], img').count(), 0)
    assert.equal(await page.locator('.info .main .url').innerText(), `${server.origin}/v1/openapi.json`)
    const documents = requested.filter((url) => /openapi|\/docs\/(json|yaml)/.test(url))
    assert.deepEqual(documents, [`${server.origin}/v1/openapi.json`], 'the one document, read once')
    const summaries = await page.locator('.opblock-summary').allInnerTexts()
    assert.deepEqual(summaries.map((text) => text.replace(/\s+/g, ' ').trim()), [
      'GET /pets List animals',
      'POST /pets Add an animal',
      'GET /pets/{petId} Get an animal (deprecated)'
    ])
    assert.match(await page.locator('#operations-pets-getPet').getAttribute('class') ?? '', /opblock-deprecated/)
    assert.doesNotMatch(await page.locator('#operations-pets-listPets').getAttribute('class') ?? '', /opblock-deprecated/)
    assert.deepEqual(blocked, [], 'no request left the server under test')
  })

  it('lists every error code with its status and meaning in the description', async () => {
    const items = (await page.locator('.info .description li').allInnerTexts()).map((text) => text.trim())
    assert.deepEqual(items, Object.entries(ERROR_CATALOGUE).map(([code, { status, meaning }]) => `${code} (${status}): ${meaning.replaceAll('`', '')}`))
  })

  it('lists the models under Schemas, each with its fields, Pets as an array of Pet', async () => {
    // OpenAPI 3.1 models are drawn as JSON Schema 2020-12 articles, one a model at level 0.
    const models = page.locator('section.models article[data-json-schema-level="0"]')
    const titles = models.locator('> .json-schema-2020-12-head .json-schema-2020-12__title')
    await titles.first().waitFor({ timeout: 15_000 })
    assert.deepEqual((await titles.allInnerTexts()).sort(), ['Error', 'NewPet', 'Pet', 'PetStatus', 'Pets'])

    const model = (name: string) => models.filter({ has: page.locator(`> .json-schema-2020-12-head .json-schema-2020-12__title:text-is("${name}")`) })
    // A schema's head as it reads: its name, then its type.
    const read = async (heads: Locator): Promise<string[]> => await Promise.all((await heads.all()).map(async (head) =>
      (await Promise.all(['.json-schema-2020-12__title', '.json-schema-2020-12__attribute--primary'].map(async (part) => (await head.locator(part).innerText()).trim()))).join(' ')))
    const head = (name: string) => model(name).locator('> .json-schema-2020-12-head')
    assert.deepEqual(await read(head('Pets')), ['Pets array<Pet>'])
    await head('Pets').locator('button.json-schema-2020-12-accordion').click()
    const items = model('Pets').locator('.json-schema-2020-12-keyword--items > article > .json-schema-2020-12-head')
    await items.waitFor()
    assert.deepEqual(await read(items), ['Items Pet'])
    await items.locator('button.json-schema-2020-12-accordion').click()
    const itemFields = model('Pets').locator('.json-schema-2020-12-keyword--items .json-schema-2020-12-property > article > .json-schema-2020-12-head')
    await itemFields.first().waitFor()
    assert.deepEqual(await read(itemFields), ['id integer', 'name string', 'categoryId integer', 'status PetStatus'])

    await head('Pet').locator('button.json-schema-2020-12-accordion').click()
    const fields = model('Pet').locator('.json-schema-2020-12-property > article > .json-schema-2020-12-head')
    await fields.first().waitFor()
    assert.deepEqual(await read(fields), ['id integer', 'name string', 'categoryId integer', 'status PetStatus'])
    await fields.last().locator('button.json-schema-2020-12-accordion').click()
    assert.match(await model('Pet').innerText(), /status\s*Collapse all\s*PetStatus\s*Availability of the animal\.\s*Enum/)

    // The test's artefact: the page as a reader sees it, models open; not kept in the repository.
    const screenshot = join(mkdtempSync(join(tmpdir(), 'petstore-docs-')), 'docs-page.png')
    await page.screenshot({ path: screenshot, fullPage: true })
    console.log(`docs page screenshot: ${screenshot}`)
  })

  it('sends a request with the key from Authorize, Try it out, Execute, and shows the response', async () => {
    await page.locator('.btn.authorize').first().click()
    const dialog = page.locator('.modal-ux')
    await dialog.locator('input').first().fill(TEST_KEY)
    await dialog.locator('button.authorize').click()
    await dialog.locator('button.btn-done').click()

    const operation = page.locator('#operations-pets-listPets')
    await operation.locator('.opblock-summary').click()
    await operation.locator('.opblock-body').waitFor()
    // The page opens operations in "Try it out" mode (tryItOutEnabled); otherwise switch it on.
    if (await operation.locator('button.execute').count() === 0) await operation.locator('button.try-out__btn').click()
    await operation.locator('button.execute').click()
    const status = operation.locator('.live-responses-table .response .response-col_status').first()
    await status.waitFor({ timeout: 15_000 })
    assert.equal((await status.innerText()).trim(), '200')
    await operation.locator('.live-responses-table .response-col_description pre').first().waitFor()
    assert.match(await operation.locator('.live-responses-table').innerText(), /Docs Rex/)

    assert.equal(apiRequests.length, 1, JSON.stringify(apiRequests))
    assert.equal(apiRequests[0]!.url, `${server.api}/pets?limit=20`)
    assert.equal(apiRequests[0]!.authorization, `Bearer ${TEST_KEY}`)
    assert.deepEqual(blocked, [])
  })
})

describe('GET /docs behind a proxy that serves the service under a path prefix', { skip }, () => {
  let server: TestServer
  let proxy: Server
  let browser: Browser

  before(async () => {
    // The proxy passes on what is under /petstore, without it, as a reverse proxy's location block would.
    let target = ''
    proxy = createServer((request, response) => {
      if (!(request.url ?? '').startsWith('/petstore/')) return response.writeHead(404).end()
      const path = request.url!.slice('/petstore'.length)
      const upstream = httpRequest(`${target}${path}`, { method: request.method, headers: request.headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
      })
      upstream.on('error', () => response.destroy())
      request.pipe(upstream)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const publicOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
    server = await startTestServer({ env: { PUBLIC_BASE_URL: `${publicOrigin}/petstore/v1` } })
    target = server.origin
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    proxy?.close()
  })

  it('renders the page at the deprecation Link of getPet, every asset found under the prefix', async () => {
    const link = (await fetch(`${server.api}/pets/1`, { headers: AUTH })).headers.get('link') ?? ''
    const docsUrl = /^<([^>]+)>; rel="deprecation"/.exec(link)?.[1]
    assert.match(docsUrl ?? '', /\/petstore\/docs\/$/)
    const page = await browser.newPage()
    const failed: string[] = []
    const documents: string[] = []
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`)
      if (response.url().includes('openapi')) documents.push(response.url())
    })
    assert.equal((await page.goto(docsUrl!))?.status(), 200)
    for (const operation of ['listPets', 'createPet', 'getPet']) {
      await page.locator(`#operations-pets-${operation}`).waitFor({ timeout: 15_000 })
    }
    assert.deepEqual(failed, [])
    assert.deepEqual(documents, [docsUrl!.replace(/docs\/$/, 'v1/openapi.json')], 'the one document, under the prefix')
  })
})
