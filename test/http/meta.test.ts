import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ERROR_CATALOGUE } from '../../src/schemas/error.js'
import { AUTH, backends, errorBody, startTestServer, type TestServer } from '../support/helper.js'
import { rawRequest } from '../support/raw-http.js'
import { startBreakableServer } from '../support/unreadable-database.js'

for (const backend of backends()) {
  describe(`${backend.name}: health, readiness and docs`, { skip: backend.skip }, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server.close() })

    it('answers /healthz, /readyz and /readyz/process with 200 while the store answers', async () => {
      for (const path of ['/healthz', '/readyz', '/readyz/process']) assert.equal((await fetch(`${server.origin}${path}`)).status, 200, path)
    })

    it('answers 404 under /readyz/process and under /healthz: no path beneath them is routed', async () => {
      for (const path of ['/readyz/process/x', '/readyz/store', '/healthz/process']) {
        const response = await fetch(`${server.origin}${path}`)
        assert.equal(response.status, 404, path)
        assert.equal((await errorBody(response)).code, 'not_found', path)
      }
    })

    it('serves the interactive reference at /docs with its assets from the package itself', async () => {
      const page = await fetch(`${server.origin}/docs/`, { redirect: 'follow' })
      assert.equal(page.status, 200)
      const html = await page.text()
      assert.match(html, /swagger-ui/i)
      assert.match(html, /<title>Pet Store API reference<\/title>/)
      assert.ok(!/https?:\/\/(?!127\.0\.0\.1)[^"']*\.(js|css)/.test(html), 'no asset from another host')
      for (const asset of [...html.matchAll(/(?:src|href)="\.?\/?([^"]+\.(?:js|css))"/g)].map((m) => m[1]!)) {
        const response = await fetch(new URL(asset, `${server.origin}/docs/`))
        assert.equal(response.status, 200, asset)
      }
    })

    it('has one OpenAPI document: /docs/json and /docs/yaml redirect to /v1/openapi.json and /v1/openapi.yaml', async () => {
      for (const format of ['json', 'yaml']) {
        const response = await fetch(`${server.origin}/docs/${format}`, { redirect: 'manual' })
        assert.equal(response.status, 302, format)
        assert.equal(new URL(response.headers.get('location') ?? '', `${server.origin}/docs/${format}`).href, `${server.origin}/v1/openapi.${format}`)
        assert.equal((await fetch(`${server.origin}/docs/${format}`)).url, `${server.origin}/v1/openapi.${format}`)
      }
    })

    it('describes every error code of the catalogue, with its status and meaning, in the OpenAPI document', async () => {
      const { info } = await (await fetch(`${server.api}/openapi.json`)).json() as { info: { description: string } }
      const listed = info.description.split('\n').filter((line) => line.startsWith('- `'))
      assert.deepEqual(listed, Object.entries(ERROR_CATALOGUE).map(([code, { status, meaning }]) => `- \`${code}\` (${status}): ${meaning}`))
      assert.doesNotMatch(info.description, /errors\.md/, 'no pointer to a file of the repository')
    })

    const aroundTheApi = ['/healthz', '/readyz', '/readyz/process', '/v1/openapi.json', '/v1/openapi.yaml', '/docs', '/docs/', '/docs/json', '/docs/yaml', '/docs/static/index.css', '/docs/static/theme/docs-page.js']

    it('answers HEAD like GET, without a body, on every path around the API', async () => {
      for (const path of aroundTheApi) {
        const got = await fetch(`${server.origin}${path}`, { redirect: 'manual' })
        const bytes = Buffer.byteLength(await got.text())
        const response = await rawRequest(server.origin, `HEAD ${path} HTTP/1.1\r\nHost: ${new URL(server.origin).host}\r\nConnection: close\r\n\r\n`)
        assert.equal(response.status, got.status, path)
        assert.equal(response.headers['content-type'] ?? null, got.headers.get('content-type'), path)
        assert.equal(response.headers.location, got.headers.get('location') ?? undefined, path)
        assert.equal(response.headers['content-length'], String(bytes), path)
        assert.equal(response.body, '', path)
      }
    })

    it('answers every other method on the paths around the API with 405 and Allow: GET, HEAD, whatever the body', async () => {
      for (const path of aroundTheApi) {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND']) {
          const response = await rawRequest(server.origin, `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n{bad`)
          assert.equal(response.status, 405, `${method} ${path}: ${response.body}`)
          assert.equal(response.headers.allow, 'GET, HEAD', `${method} ${path}`)
          assert.equal(JSON.parse(response.body).code, 'method_not_allowed', `${method} ${path}`)
        }
      }
    })

    it('keeps /readyz/process at 200 while the database cannot be read: /readyz 503, the API its JSON 503 with Retry-After', async () => {
      const { server: broken, cutDatabase, close } = await startBreakableServer(backend.name)
      try {
        await cutDatabase()
        const ready = await fetch(`${broken.origin}/readyz`)
        assert.equal(ready.status, 503)
        assert.equal((await errorBody(ready)).code, 'unavailable')
        assert.equal(ready.headers.get('retry-after'), '1')
        const list = await fetch(`${broken.api}/pets`, { headers: AUTH })
        assert.equal(list.status, 503)
        assert.match(list.headers.get('content-type') ?? '', /^application\/json/)
        assert.deepEqual(Object.keys(await errorBody(list)).sort(), ['code', 'message', 'status'])
        assert.equal(list.headers.get('retry-after'), '1')
        const process = await fetch(`${broken.origin}/readyz/process`)
        assert.equal(process.status, 200, 'the pod stays in the Service and answers its callers itself')
        assert.deepEqual(await process.json(), { status: 'serving' })
        assert.equal((await fetch(`${broken.origin}/healthz`)).status, 200, 'the process still lives')
      } finally {
        await close()
      }
    })

    it('turns /readyz/process to 503 unavailable with Retry-After once the drain begins, the database up or not', async () => {
      const { server: broken, cutDatabase, close } = await startBreakableServer(backend.name)
      try {
        broken.app.startDraining()
        for (const cut of [false, true]) {
          if (cut) await cutDatabase()
          const process = await fetch(`${broken.origin}/readyz/process`)
          assert.equal(process.status, 503, `database ${cut ? 'cut' : 'up'}`)
          assert.equal((await errorBody(process)).code, 'unavailable')
          assert.equal(process.headers.get('retry-after'), '1')
          assert.equal(process.headers.get('connection'), 'close')
        }
        assert.doesNotMatch(broken.logText(), /"level":50/, 'a draining probe is no error')
      } finally {
        await close()
      }
    })
  })
}
