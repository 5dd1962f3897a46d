/**
 * The service behind HAProxy as deploy/haproxy/petstore.cfg sets it up (docs/deployment.md#haproxy):
 * each instance gets the recipe's number of requests at once; past a queue of that depth HAProxy
 * refuses at once, and a request queued past `timeout queue` is refused too, both with the
 * service's own refusal (its status, headers and Error body); an instance that stops is taken out
 * and its requests go to another.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { AUTH, skippedFile, startTestServer, type TestServer } from '../support/helper.js'
import { HAPROXY_RECIPE, haproxyMissing, recipeSections, startHaproxy, type Haproxy } from '../support/haproxy.js'
import { freePort } from '../support/process.js'
import { openRaw, rawRequest, startHalfSentCreate, type RawResponse } from '../support/raw-http.js'
import { TEST_KEY } from '../support/constants.js'

const skip = haproxyMissing()
if (skip !== false) skippedFile(`HAProxy tests skipped: ${skip}`)

const LIST = `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`
/** The headers a refusal carries that a client reads; the errorfile must carry the service's. */
const REFUSAL_HEADERS = ['content-type', 'retry-after', 'cache-control', 'x-content-type-options']

/** A number the recipe sets, by the pattern around it. */
function recipeNumber (pattern: RegExp): number {
  const match = pattern.exec(readFileSync(HAPROXY_RECIPE, 'utf8'))
  assert.ok(match !== null, `${String(pattern)} in ${HAPROXY_RECIPE}`)
  return Number(match[1])
}

/** HAProxy's `show stat` fields of the backend's line: `qcur` is the third. */
async function queued (haproxy: Haproxy): Promise<number> {
  const line = (await haproxy.command('show stat')).split('\n').find((each) => each.startsWith('petstore,BACKEND,'))
  return Number(line?.split(',')[2] ?? 0)
}

function sameRefusal (answer: RawResponse, refusal: RawResponse, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.body}`)
  assert.equal(answer.body, refusal.body, what)
  for (const name of REFUSAL_HEADERS) assert.equal(answer.headers[name], refusal.headers[name], `${what}: ${name}`)
}

describe('behind HAProxy: spikes refused in front, with the service\'s own refusal', { skip }, () => {
  let dir: string
  let server: TestServer
  let refusing: TestServer
  let haproxy: Haproxy
  let origin: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-haproxy-'))
    server = await startTestServer()
    // The service's refusal, to hold the errorfile to: MAX_QUEUE_DELAY=0 refuses every request behind a key.
    refusing = await startTestServer({ env: { MAX_QUEUE_DELAY: '0' } })
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    haproxy = await startHaproxy({ dir, sections: recipeSections(port, [new URL(server.origin).host]) })
  })
  after(async () => {
    await haproxy?.stop()
    await server?.close()
    await refusing?.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it('refuses at once past a full queue, and after `timeout queue` what waited; the held creates are served', { timeout: 30_000 }, async () => {
    const refusal = await rawRequest(refusing.origin, LIST)
    assert.equal(refusal.status, 503, refusal.body)
    const atOnce = recipeNumber(/^ *default-server .*\bmaxconn (\d+)/m)
    const depth = recipeNumber(/avg_queue gt (\d+)/)

    // The instance's places taken by creates that wait for the rest of their body.
    const held = await Promise.all(Array.from({ length: atOnce }, async (_, n) => await startHalfSentCreate(origin, { name: `held ${n}`, categoryId: 1 })))
    const waiting = await Promise.all(Array.from({ length: depth + 1 }, async () => {
      const connection = await openRaw(origin)
      connection.write(LIST)
      return connection
    }))
    for (const deadline = Date.now() + 10_000; await queued(haproxy) < depth + 1; await sleep(20)) {
      assert.ok(Date.now() < deadline, `HAProxy queued ${await queued(haproxy)} of ${depth + 1}`)
    }
    let waited = 0
    for (const { response } of waiting) void response.then(() => { waited++ })

    sameRefusal(await rawRequest(origin, LIST), refusal, 'past the queue')
    assert.equal(waited, 0, 'refused before the queued requests timed out')
    for (const { response } of waiting) sameRefusal(await response, refusal, 'queued past timeout queue')

    const created = await Promise.all(held.map(async (create) => await create.finish()))
    assert.deepEqual(created.map(({ status }) => status), created.map(() => 201))
  })
})

describe('behind HAProxy: an instance that stops', { skip }, () => {
  let dir: string
  const instances: TestServer[] = []
  let haproxy: Haproxy
  let origin: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-haproxy-'))
    instances.push(await startTestServer(), await startTestServer())
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    haproxy = await startHaproxy({ dir, sections: recipeSections(port, instances.map(({ origin }) => new URL(origin).host)) })
  })
  after(async () => {
    await haproxy?.stop()
    for (const instance of instances) await instance.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it('sends its requests to the other instance at once, and its health check takes it out', { timeout: 30_000 }, async () => {
    await instances[1]!.close()
    const statuses: number[] = []
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${origin}/v1/pets?limit=1`, { headers: AUTH })
      await response.arrayBuffer()
      statuses.push(response.status)
    }
    assert.deepEqual(statuses, statuses.map(() => 200))
    let status = ''
    for (const deadline = Date.now() + 15_000; status !== 'DOWN' && Date.now() < deadline; await sleep(200)) {
      status = (await haproxy.status()).get('petstore/instance2') ?? ''
    }
    assert.equal(status, 'DOWN', 'taken out by its health check')
  })
})
