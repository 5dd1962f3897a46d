/**
 * A rolling update of deploy/kubernetes/overlays/postgres, on the manifest's own numbers: as many
 * instances as its autoscaler's minReplicas, each with the container's settings (SHUTDOWN_DELAY,
 * WORKERS…), behind HAProxy in mode tcp with no retries and no redispatch and no health check, as
 * kube-proxy forwards to the endpoints it is told of. Each instance is replaced as the Deployment
 * controller does with maxSurge 1 and maxUnavailable 0: a new one is started (its init
 * container's `petstore migrate`, then `serve`) and, once its /readyz answers, the old one gets
 * SIGTERM, and it leaves the balancer ENDPOINT_PROPAGATION_S later, as its endpoint leaves
 * kube-proxy's rules; a new one joins the balancer as late after it is ready. Writers create with
 * an Idempotency-Key and never retry; readers list and get.
 *
 * ROLLING_UPDATE_SHUTDOWN_DELAY=0 runs it with that SHUTDOWN_DELAY instead of the manifest's: below
 * the propagation delay, connections meet an instance that stopped listening (docs/deployment.md#kubernetes).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { runCli } from '../support/cli.js'
import { freePort, startServerProcess, waitUntilUp, type ServerProcess } from '../support/process.js'
import { startLoad, storedIds, type Load } from '../support/failover-load.js'
import { haproxyMissing, startHaproxy, type Haproxy } from '../support/haproxy.js'
import { createTestDatabase, skippedFile, type TestDatabase } from '../support/helper.js'
import { containerOf, deploymentOf, ENDPOINT_PROPAGATION_S, kubectlMissing, only, renderOverlay } from '../support/kubernetes.js'

/** Load before the first replacement and after the last old instance has exited. */
const STEADY_MS = 2_000
/** Writers through the balancer, at least 16 clients with the reader (the admission stage on, as shipped). */
const WRITERS = 16

const skip = kubectlMissing() || haproxyMissing() ||
  (process.env.TEST_DATABASE_URL === undefined ? 'TEST_DATABASE_URL is not set' : false)
if (skip !== false) skippedFile(`Rolling update test skipped: ${skip}`)

const SHUTDOWN_DELAY_OVERRIDE = process.env.ROLLING_UPDATE_SHUTDOWN_DELAY

interface Instance {
  name: string
  server: ServerProcess
}

/** How each old instance ended: its exit code, or 'killed' past the grace period. */
type Ending = number | string

describe('deploy/kubernetes/overlays/postgres: a rolling update under load', { skip }, () => {
  let dir: string
  let database: TestDatabase
  let haproxy: Haproxy
  let balancer: string
  const instances: Instance[] = []
  let env: Record<string, string>
  let replicas: number
  let graceMs: number
  let shutdownDelay: string

  before(async () => {
    const objects = renderOverlay('postgres')
    const deployment = deploymentOf(objects)
    const container = containerOf(deployment)
    const strategy = deployment.spec!.strategy?.rollingUpdate
    assert.deepEqual([strategy?.maxSurge, strategy?.maxUnavailable], [1, 0], 'the replacement below is maxSurge 1, maxUnavailable 0')
    replicas = new HorizontalPodAutoscaler(only(objects, 'HorizontalPodAutoscaler') as unknown as HorizontalPodAutoscaler).spec!.minReplicas!
    graceMs = deployment.spec!.template.spec!.terminationGracePeriodSeconds! * 1000
    // The container's own settings; the database comes from the Secret in a cluster, here the test's.
    env = Object.fromEntries((container.env ?? []).flatMap((variable) => variable.value === undefined ? [] : [[variable.name, variable.value]]))
    if (SHUTDOWN_DELAY_OVERRIDE !== undefined) env.SHUTDOWN_DELAY = SHUTDOWN_DELAY_OVERRIDE
    shutdownDelay = env.SHUTDOWN_DELAY!

    database = await createTestDatabase('postgres')
    dir = mkdtempSync(join(tmpdir(), 'petstore-rolling-'))
    const port = await freePort()
    balancer = `http://127.0.0.1:${port}`
    haproxy = await startHaproxy({
      dir,
      sections: [
        // kube-proxy: connections forwarded as they come, never retried elsewhere, no health check.
        ['defaults', '  mode tcp', '  retries 0', '  timeout connect 2s', '  timeout client 30s', '  timeout server 30s'],
        ['listen api', `  bind 127.0.0.1:${port}`, '  balance roundrobin']
      ]
    })
    for (let n = 0; n < replicas; n++) instances.push(await startPod(`old${n + 1}`))
    await Promise.all(instances.map(async (instance) => await addEndpoint(instance)))
  })

  after(async () => {
    for (const { server } of instances) server.child.kill('SIGKILL')
    await haproxy?.stop()
    await database?.drop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  /** A pod of the Deployment: its init container's migration, then the service; resolves once /readyz answers. */
  async function startPod (name: string): Promise<Instance> {
    const migrated = await runCli(['migrate'], { env: { DATABASE_URL: database.url } })
    assert.equal(migrated.code, 0, migrated.stderr)
    const server = await startServerProcess(database.url, env)
    await waitUntilUp(`${server.origin}/readyz`, 30_000, server.child)
    return { name, server }
  }

  async function addEndpoint ({ name, server }: Instance): Promise<void> {
    assert.match(await haproxy.command(`add server api/${name} ${new URL(server.origin).host}`), /New server registered/)
    assert.equal((await haproxy.command(`enable server api/${name}`)).trim(), '')
  }

  /** SIGTERM now, its endpoint gone ENDPOINT_PROPAGATION_S later, SIGKILL past the grace period. */
  async function terminate ({ name, server }: Instance): Promise<Ending> {
    server.child.kill('SIGTERM')
    const leaving = sleep(ENDPOINT_PROPAGATION_S * 1000).then(async () => assert.equal((await haproxy.command(`disable server api/${name}`)).trim(), ''))
    const ending = await Promise.race([server.exited, sleep(graceMs, 'killed', { ref: false })])
    if (ending === 'killed') server.child.kill('SIGKILL')
    await leaving
    return ending
  }

  const demonstration = SHUTDOWN_DELAY_OVERRIDE !== undefined && Number(SHUTDOWN_DELAY_OVERRIDE) < ENDPOINT_PROPAGATION_S
  const title = demonstration
    ? `replaces every instance with SHUTDOWN_DELAY=${SHUTDOWN_DELAY_OVERRIDE}, below the propagation: connections reset; every acknowledged create stored once`
    : `replaces every instance (SHUTDOWN_DELAY=${SHUTDOWN_DELAY_OVERRIDE ?? 'the manifest\'s'}): every answer 2xx, no connection reset, every acknowledged create stored once`
  it(title, async () => {
    const started = Date.now()
    const load: Load = startLoad([balancer], { writersPerInstance: WRITERS, retryCreates: false, probes: false, client: false })
    const endings: Array<Promise<Ending>> = []
    const joinings: Array<Promise<void>> = []
    let ended: Ending[] = []
    try {
      await sleep(STEADY_MS)
      for (let n = 0; n < replicas; n++) {
        const fresh = await startPod(`new${n + 1}`)
        joinings.push(sleep(ENDPOINT_PROPAGATION_S * 1000).then(async () => await addEndpoint(fresh)))
        endings.push(terminate(instances[n]!))
        instances.push(fresh)
      }
      await Promise.all(joinings)
      ended = await Promise.all(endings)
      // The balancer's view: the old instances gone, the new ones in.
      const status = await haproxy.status()
      assert.deepEqual(instances.map(({ name }) => status.get(`api/${name}`) === 'MAINT'), instances.map(({ name }) => name.startsWith('old')))
      await sleep(STEADY_MS)
    } finally {
      await load.stop()
    }

    const stored = await storedIds(database.url, load.acknowledged.map((ack) => ack.name))
    const answered = load.answers
    const twoHundreds = answered.filter((answer) => answer.status >= 200 && answer.status < 300)
    const resets = answered.filter((answer) => answer.status === 0)
    const creates = answered.filter((answer) => answer.kind === 'create')
    const storedOnce = load.acknowledged.filter((ack) => stored.get(ack.name)?.join() === ack.id)
    console.log([
      `rolling update of ${replicas} instances, SHUTDOWN_DELAY=${shutdownDelay}, endpoint propagation ${ENDPOINT_PROPAGATION_S} s: ${((Date.now() - started) / 1000).toFixed(1)} s`,
      `  requests ${answered.length} (creates ${creates.length}), 2xx ${twoHundreds.length}, resets ${resets.length}, other ${answered.length - twoHundreds.length - resets.length}`,
      `  creates acknowledged ${load.acknowledged.length}, stored once ${storedOnce.length}`,
      `  old instances ended: ${ended.join(', ')}`,
      ...resets.slice(0, 3).map((answer) => `  e.g. ${answer.kind}: ${answer.fault}`)
    ].join('\n'))

    assert.equal(storedOnce.length, load.acknowledged.length, 'every acknowledged create stored once')
    assert.ok(load.acknowledged.length > 100, 'creates went on throughout')
    if (!demonstration) {
      assert.deepEqual(answered.filter((answer) => answer.fault !== undefined).slice(0, 5).map((answer) => `${answer.kind}: ${answer.fault}`), [], 'every answer 2xx')
      // A 503 with Retry-After and the Error body is no fault of the load's, yet no 2xx either.
      assert.deepEqual(answered.filter((answer) => answer.status < 200 || answer.status >= 300).slice(0, 5).map((answer) => `${answer.kind}: ${answer.status}`), [], 'every answer 2xx')
      assert.deepEqual(ended, Array.from({ length: replicas }, () => 0), 'every old instance exited 0 within the grace period')
    } else {
      // The demonstration: an instance that stops listening before its endpoint is gone.
      assert.ok(resets.length > 0, 'connections reset while an endpoint outlived its listener')
    }
  })
})
