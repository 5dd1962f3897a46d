/**
 * The service behind HAProxy as deploy/haproxy/petstore.cfg sets it up (docs/deployment.md#haproxy):
 * each instance gets the recipe's number of creates at once, and of reads; past a queue of that
 * depth HAProxy refuses at once, and a request queued past `timeout queue` is refused too, both
 * with the service's own refusal (its status, headers and Error body); an instance that stops is
 * taken out and its requests go to another.
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
import { openRaw, rawRequest, startHalfSentCreate, type RawConnection, type RawResponse } from '../support/raw-http.js'
import { TcpProxy } from '../support/tcp-proxy.js'
import { TEST_KEY } from '../support/constants.js'

const skip = haproxyMissing()
if (skip !== false) skippedFile(`HAProxy tests skipped: ${skip}`)

const LIST = `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`
const CREATE_BODY = '{"name":"Rex","categoryId":1}'
const CREATE = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${CREATE_BODY.length}\r\n\r\n${CREATE_BODY}`
/** The headers a refusal carries that a client reads; the errorfile must carry the service's. */
const REFUSAL_HEADERS = ['content-type', 'retry-after', 'cache-control', 'x-content-type-options']

/** A number the recipe sets in `backend`'s section, by the pattern around it. */
function recipeNumber (backend: string, pattern: RegExp): number {
  const recipe = readFileSync(HAPROXY_RECIPE, 'utf8')
  const section = recipe.slice(recipe.indexOf(`\nbackend ${backend}\n`)).split('\n\n')[0]!
  const match = pattern.exec(section)
  assert.ok(match !== null, `${String(pattern)} in ${backend} of ${HAPROXY_RECIPE}`)
  return Number(match[1])
}

/** HAProxy's `show stat` fields of the backend's line: `qcur` is the third. */
async function queued (haproxy: Haproxy, backend: string): Promise<number> {
  const line = (await haproxy.command('show stat')).split('\n').find((each) => each.startsWith(`${backend},BACKEND,`))
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
  /** Between HAProxy and the service: stalled, it holds every request HAProxy sends on. */
  let proxy: TcpProxy
  let haproxy: Haproxy
  let origin: string
  let refusal: RawResponse
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-haproxy-'))
    server = await startTestServer()
    // The service's refusal, to hold the errorfile to: MAX_QUEUE_DELAY=0 refuses every request behind a key.
    refusing = await startTestServer({ env: { MAX_QUEUE_DELAY: '0' } })
    refusal = await rawRequest(refusing.origin, LIST)
    assert.equal(refusal.status, 503, refusal.body)
    proxy = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(server.origin).port) })
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    haproxy = await startHaproxy({ dir, sections: recipeSections(port, [`127.0.0.1:${proxy.port}`]) })
  })
  after(async () => {
    await haproxy?.stop()
    await proxy?.close()
    await server?.close()
    await refusing?.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  /** Sends `count` requests of `text`, each on a connection of its own; they wait for their answers. */
  async function sendEach (count: number, text: string): Promise<RawConnection[]> {
    return await Promise.all(Array.from({ length: count }, async () => {
      const connection = await openRaw(origin)
      connection.write(text)
      return connection
    }))
  }

  /** Fills `backend`'s queue past its depth, then checks the next `text` is refused at once and the queued after `timeout queue`. */
  async function refusedPastTheQueue (backend: string, text: string): Promise<void> {
    const depth = recipeNumber(backend, /avg_queue gt (\d+)/)
    const waiting = await sendEach(depth + 1, text)
    for (const deadline = Date.now() + 10_000; await queued(haproxy, backend) < depth + 1; await sleep(20)) {
      assert.ok(Date.now() < deadline, `HAProxy queued ${await queued(haproxy, backend)} of ${depth + 1}`)
    }
    let waited = 0
    for (const { response } of waiting) void response.then(() => { waited++ })

    sameRefusal(await rawRequest(origin, text), refusal, 'past the queue')
    assert.equal(waited, 0, 'refused before the queued requests timed out')
    for (const { response } of waiting) sameRefusal(await response, refusal, 'queued past timeout queue')
  }

  it('sends creates the recipe\'s number at once, queues more, refuses the rest; the held creates are served', { timeout: 30_000 }, async () => {
    // The instance's places taken by creates that wait for the rest of their body.
    const atOnce = recipeNumber('petstore-creates', /^ *default-server .*\bmaxconn (\d+)/m)
    const held = await Promise.all(Array.from({ length: atOnce }, async (_, n) => await startHalfSentCreate(origin, { name: `held ${n}`, categoryId: 1 })))
    await refusedPastTheQueue('petstore-creates', CREATE)
    const created = await Promise.all(held.map(async (create) => await create.finish()))
    assert.deepEqual(created.map(({ status }) => status), created.map(() => 201))
  })

  it('sends reads fewer at once, as a pool of connections serves them, and queues and refuses the rest', { timeout: 30_000 }, async () => {
    const atOnce = recipeNumber('petstore', /^ *default-server .*\bmaxconn (\d+)/m)
    // Past the pool's 10 and a turn of it, the service would queue reads itself and refuse them late.
    assert.ok(atOnce < 20, `reads at once: ${atOnce}`)
    proxy.cut('stall')
    try {
      const held = await sendEach(atOnce, LIST)
      await refusedPastTheQueue('petstore', LIST)
      for (const { socket } of held) socket.destroy()
    } finally {
      proxy.restore()
    }
    const after = await rawRequest(origin, LIST)
    assert.equal(after.status, 200, after.body)
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
