import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { openStore } from '../../src/store/open-store.js'
import { runCli } from '../support/cli.js'
import { freePort, type ServerProcess, startServerProcess } from '../support/process.js'
import { AUTH, JSON_AUTH } from '../support/helper.js'
import { fillDisk, mountSmallDisk, type SmallDisk } from '../support/small-disk.js'
import { dashboardQueries } from '../support/dashboard.js'
import { RULES_FILE, startPrometheus, type PrometheusServer } from '../support/prometheus-server.js'
import { findTool } from '../support/prometheus-tools.js'

const REQUESTS_A_SECOND = 50
const TRAFFIC_MS = 5_000
const ALERT_WITHIN_MS = 60_000
const STORE_ALERT = 'PetstoreAvailabilityBudgetBurn'

const recordingRules = (parse(readFileSync(RULES_FILE, 'utf8')) as { groups: Array<{ rules: Array<{ record?: string }> }> })
  .groups.flatMap((group) => group.rules).flatMap((rule) => rule.record ?? [])

/**
 * A fixed REQUESTS_A_SECOND of mixed traffic until stopped: lists, gets, creates, and one request
 * in 250 with an unknown key (12 a minute, under the forged-key throttle's 20).
 */
function startTraffic (origin: string): { stop: () => Promise<void> } {
  const ids: number[] = []
  const inFlight = new Set<Promise<void>>()
  const state = { running: true }
  const send = async (i: number): Promise<void> => {
    try {
      if (i % 250 === 0) {
        await (await fetch(`${origin}/v1/pets`, { headers: { authorization: 'Bearer not-a-key' } })).arrayBuffer()
      } else if (i % 5 === 0) {
        const response = await fetch(`${origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: `traffic ${i}`, categoryId: 1 }) })
        if (response.status === 201) ids.push((await response.json() as { id: number }).id)
        else await response.arrayBuffer()
      } else if (i % 3 === 0 && ids.length > 0) {
        await (await fetch(`${origin}/v1/pets/${ids[i % ids.length]!}`, { headers: AUTH })).arrayBuffer()
      } else {
        await (await fetch(`${origin}/v1/pets?limit=10`, { headers: AUTH })).arrayBuffer()
      }
    } catch {}
  }
  const loop = (async () => {
    const started = performance.now()
    for (let i = 0; state.running; i++) {
      const due = started + i * 1000 / REQUESTS_A_SECOND
      if (due > performance.now()) await sleep(due - performance.now())
      const request = send(i)
      inFlight.add(request)
      void request.then(() => inFlight.delete(request))
    }
  })()
  return {
    stop: async () => {
      state.running = false
      await loop
      await Promise.all(inFlight)
    }
  }
}

/** The queries with no data yet, retried until none is left or `timeoutMs` passes. */
async function queriesWithoutData (prometheus: PrometheusServer, queries: string[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs
  let empty = queries
  for (;;) {
    empty = (await Promise.all(empty.map(async (expr) => ((await prometheus.query(expr)).length === 0 ? [expr] : [])))).flat()
    if (empty.length === 0 || Date.now() > deadline) return empty
    await sleep(500)
  }
}

const prometheusPath = findTool('prometheus', 'The Prometheus test')
const disk: SmallDisk | undefined = prometheusPath === undefined ? undefined : mountSmallDisk('8m')
if (disk !== undefined && 'refused' in disk) console.log(`The store outage of the Prometheus test skipped: cannot mount a tmpfs (${disk.refused})`)

describe('a real Prometheus on the real service, the rules loaded', { skip: prometheusPath === undefined }, () => {
  const dir = disk !== undefined && 'dir' in disk ? disk.dir : mkdtempSync(join(tmpdir(), 'petstore-prometheus-db-'))
  const databaseUrl = `sqlite:${join(dir, 'petstore.db')}`
  const backupDir = mkdtempSync(join(tmpdir(), 'petstore-backup-'))
  const seen = new Map<number, number>()
  const queries = [...recordingRules, ...dashboardQueries().map((query) => query.expr)]
  // Read once by the tests below, so waited for as the queries are: each scrape reads them from the store, and a read that failed leaves none.
  const gauges = ['petstore_backup_last_success_timestamp_seconds', 'petstore_api_key_expiry_timestamp_seconds{key="partner"}']

  before(async () => {
    const store = await openStore(databaseUrl)
    await store.migrate()
    await store.backup!(join(backupDir, 'backup.db'))
    await store.close()
    const created = await runCli(['keys', 'create', '--name', 'partner', '--expires-in', '30d', '--database-url', databaseUrl])
    assert.equal(created.code, 0, created.stderr)
  })
  after(() => {
    if (disk !== undefined && 'unmount' in disk) disk.unmount()
    else rmSync(dir, { recursive: true, force: true })
    rmSync(backupDir, { recursive: true, force: true })
  })

  for (const workers of [1, 2]) {
    describe(`WORKERS=${workers}`, () => {
      let server: ServerProcess
      let prometheus: PrometheusServer
      let traffic: { stop: () => Promise<void> } | undefined
      before(async () => {
        const metricsPort = await freePort()
        server = await startServerProcess(databaseUrl, { WORKERS: String(workers), METRICS_PORT: String(metricsPort) })
        prometheus = await startPrometheus(prometheusPath!, `127.0.0.1:${metricsPort}`)
        traffic = startTraffic(server.origin)
      })
      after(async () => {
        await traffic?.stop()
        if (disk !== undefined && 'dir' in disk) rmSync(join(dir, 'filler'), { force: true })
        await prometheus?.stop()
        server?.child.kill('SIGTERM')
        await server?.exited
      })

      it('answers every recording rule and dashboard query with data, and no alert is pending or firing', async () => {
        await sleep(TRAFFIC_MS)
        assert.deepEqual(await queriesWithoutData(prometheus, [...queries, ...gauges], 15_000), [], 'queries without data')
        seen.set(workers, Number((await prometheus.query('petstore_backup_last_success_timestamp_seconds'))[0]?.value[1]))
        const active = await prometheus.alerts()
        console.log(`WORKERS=${workers}: ${queries.length} queries with data, alerts pending or firing: ${active.length === 0 ? 'none' : active.map((alert) => `${alert.labels.alertname} ${alert.state}`).join(', ')}`)
        // An alert measures this machine under the suite, not the rules (promtool tests their thresholds), where the data explain it:
        // a latency alert when over 1 % of requests (the least any of them needs) were in fact slower than 250 ms;
        // the pool alert pending (its `for:` is 10 min) when a scrape in fact saw a create waiting for SQLite's writer.
        const slow = Number((await prometheus.query('petstore:slo_slow:ratio_rate6h'))[0]?.value[1] ?? 0)
        const waited = Number((await prometheus.query('max(max_over_time(petstore_store_pool_waiting_clients[1h]))'))[0]?.value[1] ?? 0)
        const unexplained = active.filter((alert) => !(
          (alert.labels.alertname?.startsWith('PetstoreLatencyBudgetBurn') === true && slow > 0.01) ||
          (alert.labels.alertname === 'PetstorePoolSaturated' && alert.state === 'pending' && waited > 0)))
        assert.deepEqual(unexplained.map((alert) => `${alert.labels.alertname} ${alert.state}`), [])
      })

      if (workers === 1) {
        it('reports the key expiring in 30 days', async () => {
          const [sample] = await prometheus.query('petstore_api_key_expiry_timestamp_seconds{key="partner"}')
          assert.ok(Math.abs(Number(sample?.value[1]) - (Date.now() / 1000 + 30 * 86400)) < 3600, 'the partner key expires in 30 days')
        })
      }

      if (workers === 2) {
        it('reads the timestamp gauges as WORKERS=1 does: the maximum, not the sum', () => {
          assert.deepEqual(seen.get(2), seen.get(1))
        })

        it('pages for availability within a minute once the disk under SQLite is full', { skip: disk === undefined || 'refused' in disk }, async () => {
          const filled = Date.now()
          fillDisk(join(dir, 'filler'))
          let state: string | undefined
          while (state === undefined && Date.now() - filled < ALERT_WITHIN_MS) {
            await sleep(1000)
            state = (await prometheus.alerts()).find((alert) => alert.labels.alertname === STORE_ALERT)?.state
          }
          const active = (await prometheus.alerts()).map((alert) => `${alert.labels.alertname} ${alert.state}`).join(', ')
          console.log(`${STORE_ALERT}: ${state ?? 'inactive'} ${((Date.now() - filled) / 1000).toFixed(0)} s after the disk filled (all pending or firing: ${active})`)
          assert.ok(state === 'pending' || state === 'firing', `${STORE_ALERT} is ${state ?? 'inactive'}`)
        })
      }
    })
  }
})
