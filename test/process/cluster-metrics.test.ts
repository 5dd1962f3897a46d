import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { issueApiKey } from '../../src/domain/api-keys/lifecycle.js'
import { TEST_KEY } from '../support/constants.js'
import { AUTH, JSON_AUTH, createTestDatabase, openTestStore, type TestDatabase } from '../support/helper.js'
import { freePorts, startCli, type CliProcess } from '../support/process.js'

const CREATES = 40
const LISTS = 100
const GETS = 60
const SENT = CREATES + LISTS + GETS
const EXPIRES_AT = new Date('2031-06-01T00:00:00.000Z')

interface Sample { name: string, labels: Record<string, string>, value: number }

/** The samples of a Prometheus text exposition. */
function parseExposition (text: string): Sample[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).map((line) => {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    assert.ok(match !== null, `an exposition line: ${line}`)
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]))
    return { name: match[1]!, labels, value: Number(match[3]) }
  })
}

/** The value of the one sample named `name` whose labels include `labels` (0 when there is none). */
function valueOf (samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name &&
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
  assert.ok(found.length <= 1, `one sample of ${name} ${JSON.stringify(labels)}`)
  return found[0]?.value ?? 0
}

/** GET /metrics from the primary's metrics listener. */
async function scrape (metricsOrigin: string): Promise<{ status: number, samples: Sample[] }> {
  const response = await fetch(`${metricsOrigin}/metrics`, { signal: AbortSignal.timeout(10_000) })
  return { status: response.status, samples: parseExposition(await response.text()) }
}

interface AccessLine { pid: number, method: string, route: string, status: number }

/** The access-log lines written so far, once there are at least `count` of them. */
async function accessLines (cli: CliProcess, count: number): Promise<AccessLine[]> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const lines = cli.stdout().split('\n').filter((line) => line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line) as AccessLine)
    if (lines.length >= count || Date.now() > deadline) return lines
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('the metrics listener with WORKERS=2', () => {
  let database: TestDatabase
  let cli: CliProcess
  let origin: string
  let metricsOrigin: string
  let served: AccessLine[]
  before(async () => {
    database = await createTestDatabase('sqlite')
    const store = await openTestStore(database)
    await issueApiKey(store, { name: 'expiring', lifetime: { expiresAt: EXPIRES_AT } })
    await store.close()
    const [port, metricsPort] = await freePorts(2)
    origin = `http://127.0.0.1:${port}`
    metricsOrigin = `http://127.0.0.1:${metricsPort}`
    cli = startCli(['serve'], { WORKERS: '2', PORT: String(port), METRICS_PORT: String(metricsPort), DATABASE_URL: database.url, PETSTORE_API_KEYS: TEST_KEY })
    await cli.listening(2)

    // Sent at once, over as many connections, so both workers serve some.
    const created = await Promise.all(Array.from({ length: CREATES }, async (_, i) => {
      const response = await fetch(`${origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: `pet ${i}`, categoryId: 1 }) })
      assert.equal(response.status, 201)
      return (await response.json() as { id: number }).id
    }))
    await Promise.all([
      ...Array.from({ length: LISTS }, async () => {
        const response = await fetch(`${origin}/v1/pets?limit=5`, { headers: AUTH })
        assert.equal(response.status, 200)
        await response.arrayBuffer()
      }),
      ...Array.from({ length: GETS }, async (_, i) => {
        const response = await fetch(`${origin}/v1/pets/${created[i % CREATES]!}`, { headers: AUTH })
        assert.equal(response.status, 200)
        await response.arrayBuffer()
      })
    ])
    served = await accessLines(cli, SENT)
  })
  after(async () => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL')
    await database.drop()
  })

  it('spreads the requests sent over both workers', () => {
    assert.equal(served.length, SENT)
    assert.equal(new Set(served.map((line) => line.pid)).size, 2, 'both workers served some')
  })

  it('answers the primary\'s scrape with the sum of both workers\' counts', async () => {
    const { status, samples } = await scrape(metricsOrigin)
    assert.equal(status, 200)
    assert.equal(valueOf(samples, 'petstore_http_requests_total', { operation: 'createPet', status: '201' }), CREATES)
    assert.equal(valueOf(samples, 'petstore_http_requests_total', { operation: 'listPets', status: '200' }), LISTS)
    assert.equal(valueOf(samples, 'petstore_http_requests_total', { operation: 'getPet', status: '200' }), GETS)
    assert.equal(valueOf(samples, 'petstore_http_request_duration_seconds_count', { operation: 'listPets' }), LISTS)
    assert.equal(valueOf(samples, 'petstore_http_request_duration_seconds_bucket', { operation: 'getPet', le: '+Inf' }), GETS)
    assert.equal(valueOf(samples, 'petstore_deprecated_calls_total', { operation: 'getPet', key: 'env-1' }), GETS)
    assert.equal(valueOf(samples, 'petstore_store_errors_total'), 0)
  })

  it('reports a key\'s expiry once, the maximum over the workers rather than their sum', async () => {
    const { samples } = await scrape(metricsOrigin)
    assert.equal(valueOf(samples, 'petstore_api_key_expiry_timestamp_seconds', { key: 'expiring' }), EXPIRES_AT.getTime() / 1000)
  })

  it('reads the store gauges once, not summed: the last backup by maximum, the pool\'s waiting clients 0', async () => {
    const { samples } = await scrape(metricsOrigin)
    const db = new Database(database.url.slice('sqlite:'.length), { readonly: true })
    const created = db.prepare('SELECT applied_at FROM schema_migrations WHERE version = 1').pluck().get() as string
    db.close()
    // Never backed up: the database's creation time, whichever worker answered.
    assert.equal(valueOf(samples, 'petstore_backup_last_success_timestamp_seconds'), new Date(created).getTime() / 1000)
    assert.equal(valueOf(samples, 'petstore_store_pool_waiting_clients'), 0)
  })

  it('answers /metrics on the API port 404, whichever worker gets it', async () => {
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${origin}/metrics`, { headers: { connection: 'close' } })
      assert.equal(response.status, 404)
      assert.doesNotMatch(await response.text(), /env-1/)
    }
  })

  it('still stops gracefully on SIGTERM, its metrics listener closed', async () => {
    cli.child.kill('SIGTERM')
    assert.equal(await cli.exited, 0)
    await assert.rejects(fetch(`${metricsOrigin}/metrics`))
  })
})
