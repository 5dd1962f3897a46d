import assert from 'node:assert/strict'
import { existsSync, mkdirSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { chromium, type Browser, type Page } from 'playwright-core'
import { TEST_KEY, post, startTestServer, type TestServer } from '../support/helper.js'
import { ROOT } from '../support/cli.js'

const CHROMIUM = '/usr/bin/chromium'
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium): docs page tests skipped`

describe('GET /docs in a real browser', { skip }, () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  const blocked: string[] = []
  const apiRequests: Array<{ url: string, authorization: string | undefined }> = []

  before(async () => {
    server = await startTestServer()
    assert.equal((await post(server, '/pets', { name: 'Docs Rex', categoryId: 3 })).status, 201)
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']
    })
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
      if (request.url().startsWith(`${server.api}/pets`)) apiRequests.push({ url: request.url(), authorization: request.headers().authorization })
    })
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it('loads from the server alone and shows the three operations, getPet marked deprecated', async () => {
    const response = await page.goto(`${server.origin}/docs`)
    assert.equal(response?.status(), 200)
    for (const operation of ['listPets', 'createPet', 'getPet']) {
      await page.locator(`#operations-pets-${operation}`).waitFor({ timeout: 15_000 })
    }
    assert.equal(await page.locator('.opblock').count(), 3)
    assert.match(await page.locator('#operations-pets-getPet').getAttribute('class') ?? '', /opblock-deprecated/)
    assert.doesNotMatch(await page.locator('#operations-pets-listPets').getAttribute('class') ?? '', /opblock-deprecated/)
    assert.deepEqual(blocked, [], 'no request left the server under test')
  })

  it('lists the models under Schemas: Pet, Pets, PetStatus, NewPet and Error', async () => {
    // OpenAPI 3.1 models are drawn as JSON Schema 2020-12 articles, one a model at level 0.
    const titles = page.locator('section.models article[data-json-schema-level="0"] > .json-schema-2020-12-head .json-schema-2020-12__title')
    await titles.first().waitFor({ timeout: 15_000 })
    assert.deepEqual((await titles.allInnerTexts()).sort(), ['Error', 'NewPet', 'Pet', 'PetStatus', 'Pets'])
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

    mkdirSync(join(ROOT, 'test-output'), { recursive: true })
    await page.screenshot({ path: join(ROOT, 'test-output', 'docs-page.png'), fullPage: true })
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
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']
    })
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    proxy?.close()
  })

  it('renders the page at the deprecation Link of getPet, every asset found under the prefix', async () => {
    const link = (await fetch(`${server.api}/pets/1`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).headers.get('link') ?? ''
    const docsUrl = /^<([^>]+)>; rel="deprecation"/.exec(link)?.[1]
    assert.match(docsUrl ?? '', /\/petstore\/docs\/$/)
    const page = await browser.newPage()
    const failed: string[] = []
    page.on('response', (response) => { if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`) })
    assert.equal((await page.goto(docsUrl!))?.status(), 200)
    for (const operation of ['listPets', 'createPet', 'getPet']) {
      await page.locator(`#operations-pets-${operation}`).waitFor({ timeout: 15_000 })
    }
    assert.deepEqual(failed, [])
  })
})
