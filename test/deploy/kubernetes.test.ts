/**
 * deploy/kubernetes as a cluster receives it: each overlay rendered by kubectl's kustomize, alone and
 * with each Component, every object validated against its API's own schema (test/support/kubernetes-schemas.ts),
 * then the rules between the objects and the service that no schema knows, each read from where its
 * fact lives: the Dockerfile, the settings of src/config.ts, the drain limit of src/process/server.ts,
 * SQLite's busy timeout, docs/performance.md's peak RSS, package.json's version. The Components' own
 * rules are in kubernetes-components.test.ts, the linters' checks in kubernetes-linters.test.ts.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse, parseAllDocuments } from 'yaml'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IContainer } from 'kubernetes-models/v1/Container'
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim'
import type { IProbe } from 'kubernetes-models/v1/Probe'
import { Service } from 'kubernetes-models/v1/Service'
import type { Config } from '../../src/config.js'
import { SHUTDOWN_TIMEOUT_MS } from '../../src/process/server.js'
import { BUSY_TIMEOUT_MS } from '../../src/store/sqlite/connection.js'
import { ROOT } from '../support/constants.js'
import { skippedFile, startTestServer, type TestServer } from '../support/helper.js'
import {
  COMPONENTS, containerOf, deploymentOf, ENDPOINT_PROPAGATION_S, FROM_SECRET, IMAGE_UID, KUBERNETES_DIR, kubectlMissing, only, OVERLAYS, overlayDir,
  renderOnTop, renderOverlay, renderWith, selectorsOf, serviceConfig, type KubernetesObject, type Overlay
} from '../support/kubernetes.js'
import { schemaErrors } from '../support/kubernetes-schemas.js'
import { startBreakableServer } from '../support/unreadable-database.js'

/** After the drain, the process still closes its store and writes its last lines before it exits. */
const GRACE_MARGIN_S = 5
/** The kubelet's default log rotation, containerLogMaxFiles × containerLogMaxSize (5 × 10 Mi): a container's logs count against its ephemeral storage. */
const KUBELET_LOGS_BYTES = 5 * 10 * 2 ** 20
/** The labels every object carries, with the overlays' default install; the first two are the selectors'. */
const SELECTOR_LABELS = ['app.kubernetes.io/name', 'app.kubernetes.io/instance']
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
const LABELS: Record<string, string> = { 'app.kubernetes.io/name': 'petstore', 'app.kubernetes.io/instance': 'petstore', 'app.kubernetes.io/part-of': 'petstore', 'app.kubernetes.io/version': VERSION }

const skip = kubectlMissing()
if (skip !== false) skippedFile(`Kubernetes manifest tests skipped: ${skip}`)

/** The service's peak RSS per serving process, in MiB, on each database: the top of docs/performance.md's range. */
const PEAK_RSS_MIB = ((): Record<Overlay, number> => {
  const text = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8')
  const match = /Peak RSS[^:]*: the service \d+ to (\d+) MiB on SQLite and \d+ to (\d+) MiB on PostgreSQL/.exec(text)
  assert.ok(match !== null, 'docs/performance.md states the service\'s peak RSS')
  return { sqlite: Number(match[1]), postgres: Number(match[2]) }
})()

/** A Kubernetes quantity as a number: cores for CPU, bytes for memory. */
function quantity (value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(value))
  assert.ok(match !== null, `not a quantity: ${value}`)
  const factors: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }
  return Number(match[1]) * (match[2] === undefined ? 1 : factors[match[2]]!)
}

/** The container port a probe or a Service names (by name or number). */
function containerPort (container: IContainer, port: string | number | undefined): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((candidate) => candidate.name === port)?.containerPort
}

const includes = (labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean =>
  Object.keys(selector ?? {}).length > 0 && Object.entries(selector!).every(([key, value]) => labels?.[key] === value)

/** Each container port the ingress NetworkPolicies of the pods open, with each rule's `from` (undefined: from anywhere). */
function ingressRules (objects: KubernetesObject[], container: IContainer): Map<number | undefined, unknown[]> {
  const labels = deploymentOf(objects).spec!.template.metadata?.labels
  const opened = new Map<number | undefined, unknown[]>()
  for (const object of objects.filter((candidate) => candidate.kind === 'NetworkPolicy')) {
    const policy = new NetworkPolicy(object as unknown as NetworkPolicy)
    if (!(policy.spec!.policyTypes ?? []).includes('Ingress') || !includes(labels, policy.spec!.podSelector.matchLabels)) continue
    for (const rule of policy.spec!.ingress ?? []) {
      for (const port of rule.ports ?? []) {
        const number = containerPort(container, port.port)
        opened.set(number, [...opened.get(number) ?? [], rule.from])
      }
    }
  }
  return opened
}

describe('deploy/kubernetes: every rendered object valid against its API\'s schema', { skip }, () => {
  const renderings: Array<{ label: string, render: () => KubernetesObject[] }> = OVERLAYS.flatMap((overlay) => [
    { label: `overlays/${overlay}`, render: () => renderOverlay(overlay) },
    ...COMPONENTS.map((component) => ({ label: `overlays/${overlay} with components/${component}`, render: () => renderWith(overlay, [component]) }))
  ])
  for (const { label, render } of renderings) {
    it(`validates ${label}`, async () => {
      const objects = render()
      for (const object of objects) assert.deepEqual(await schemaErrors(object), [], `${object.kind} ${object.metadata.name}`)
      console.log(`${label}: ${objects.length} objects valid: ${objects.map((object) => object.kind).join(', ')}`)
    })
  }

  it('refuses what the API would: a port by name where a number goes, an access mode outside its list, an unknown field of a CRD', async () => {
    const objects = renderOverlay('sqlite')
    const deployment = structuredClone(only(objects, 'Deployment')) as unknown as { spec: { template: { spec: { containers: Array<{ ports: Array<{ containerPort: unknown }> }> } } } }
    deployment.spec.template.spec.containers[0]!.ports[0]!.containerPort = 'http'
    assert.match((await schemaErrors(deployment as unknown as KubernetesObject)).join('\n'), /containerPort must be integer/)
    const claim = { ...only(objects, 'PersistentVolumeClaim'), spec: { accessModes: 'ReadWriteOncePod' } }
    assert.match((await schemaErrors(claim)).join('\n'), /accessModes must be array/)
    const cluster = only(renderWith('postgres', ['cloudnative-pg']), 'Cluster')
    const misspelt = { ...cluster, spec: { ...(cluster.spec as object), instance: 3 } }
    assert.deepEqual(await schemaErrors(misspelt), ['/spec: must NOT have additional properties (instance)'])
  })
})

for (const overlay of OVERLAYS) {
  describe(`deploy/kubernetes/overlays/${overlay}: the rules between the objects and the service`, { skip }, () => {
    let objects: KubernetesObject[]
    let server: TestServer
    before(async () => {
      objects = renderOverlay(overlay)
      server = await startTestServer()
    })
    after(async () => { await server?.close() })

    const deployment = (): ReturnType<typeof deploymentOf> => deploymentOf(objects)
    const pod = (): NonNullable<NonNullable<ReturnType<typeof deploymentOf>['spec']>['template']['spec']> => deployment().spec!.template.spec!
    const containers = (): IContainer[] => [...pod().initContainers ?? [], ...pod().containers]
    const petstore = (): IContainer => containerOf(deployment())
    const config = (): Config => serviceConfig(petstore())

    it('runs the one image named in base/kustomization.yaml, tagged with the package\'s version', () => {
      const base = parse(readFileSync(join(KUBERNETES_DIR, 'base/kustomization.yaml'), 'utf8')) as { images: Array<{ name: string, newName: string, newTag: string }> }
      assert.equal(base.images.length, 1)
      const [image] = base.images
      const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
      assert.equal(image!.newTag, version)
      for (const container of containers()) {
        assert.equal(container.image, `${image!.newName}:${image!.newTag}`, container.name)
        assert.equal(container.imagePullPolicy, 'IfNotPresent', container.name)
      }
    })

    it('probes what the service serves: readiness on /readyz/process, liveness and start-up on /healthz, on the port it listens on', async () => {
      const { port, host } = config()
      assert.equal(host, '0.0.0.0', 'the kubelet probes the pod\'s address: HOST is every interface')
      const probes: Array<[string, IProbe | undefined, string]> = [
        ['readiness', petstore().readinessProbe, '/readyz/process'],
        ['liveness', petstore().livenessProbe, '/healthz'],
        ['startup', petstore().startupProbe, '/healthz']
      ]
      for (const [name, probe, path] of probes) {
        assert.equal(probe?.httpGet?.path, path, `${name} probe`)
        assert.equal(containerPort(petstore(), probe.httpGet.port), port, `${name} probe's port is PORT`)
        assert.equal((await fetch(`${server.origin}${path}`)).status, 200, `${path} answers`)
        // The kubelet's default is 1 s. The process path waits on nothing but the event loop, which a
        // synchronous SQLite wait for a lock holds for up to the busy timeout.
        const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000
        assert.ok(timeoutMs > BUSY_TIMEOUT_MS, `${name} probe's timeoutSeconds ${timeoutMs / 1000}, not above SQLite's busy timeout (${BUSY_TIMEOUT_MS} ms)`)
      }
    })

    it('keeps every pod in the Service through a database outage: its readiness path answers 200 with the database cut', async () => {
      const { server: broken, cutDatabase, close } = await startBreakableServer('sqlite')
      try {
        await cutDatabase()
        const path = petstore().readinessProbe!.httpGet!.path!
        assert.equal((await fetch(`${broken.origin}${path}`)).status, 200, `${path} with the database cut`)
        assert.equal((await fetch(`${broken.origin}/readyz`)).status, 503, '/readyz, the balancers\' path, still follows the database')
        broken.app.startDraining()
        assert.equal((await fetch(`${broken.origin}${path}`)).status, 503, `${path} during the drain`)
      } finally {
        await close()
      }
    })

    it('labels every object with the name, the install, part-of and the version; selectors carry the name and the install alone', () => {
      const base = parse(readFileSync(join(KUBERNETES_DIR, 'base/kustomization.yaml'), 'utf8')) as { images: Array<{ newTag: string }> }
      assert.equal(base.images[0]!.newTag, VERSION, 'the version label is the image\'s tag')
      for (const object of objects) {
        for (const [key, value] of Object.entries(LABELS)) assert.equal(object.metadata.labels?.[key], value, `${object.kind} ${object.metadata.name}: ${key}`)
      }
      for (const [key, value] of Object.entries(LABELS)) assert.equal(deployment().spec!.template.metadata?.labels?.[key], value, `the pods' ${key}`)
      const selectors = objects.flatMap(selectorsOf)
      assert.ok(selectors.length >= 5, selectors.map((selector) => selector.where).join(', '))
      for (const { where, matchLabels } of selectors) {
        assert.deepEqual(Object.keys(matchLabels).sort(), [...SELECTOR_LABELS].sort(), where)
        assert.ok(includes(deployment().spec!.template.metadata?.labels, matchLabels), `${where} selects the pods`)
      }
    })

    it('spreads the pods over nodes, then zones, never refusing to schedule one; a rollout\'s new pods counted apart', () => {
      const constraints = pod().topologySpreadConstraints ?? []
      assert.deepEqual(constraints.map((constraint) => constraint.topologyKey), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'])
      for (const constraint of constraints) {
        assert.equal(constraint.whenUnsatisfiable, 'ScheduleAnyway', `${constraint.topologyKey}: a one-node cluster still schedules`)
        assert.equal(constraint.maxSkew, 1)
        assert.deepEqual(constraint.matchLabelKeys, ['pod-template-hash'])
        assert.ok(includes(deployment().spec!.template.metadata?.labels, constraint.labelSelector?.matchLabels), `${constraint.topologyKey}: the pods of this install`)
      }
    })

    it('bounds each container\'s ephemeral storage: a request equal to its limit, above its emptyDir and the kubelet\'s rotated logs', () => {
      const volumes = new Map((pod().volumes ?? []).map((volume) => [volume.name, volume]))
      for (const container of containers()) {
        const { requests, limits } = container.resources ?? {}
        const limit = quantity(limits?.['ephemeral-storage'])
        assert.ok(limit !== undefined, `${container.name}: an ephemeral-storage limit`)
        assert.equal(quantity(requests?.['ephemeral-storage']), limit, `${container.name}: its request is the limit`)
        const emptyDirs = (container.volumeMounts ?? []).map((mount) => quantity(volumes.get(mount.name)?.emptyDir?.sizeLimit) ?? 0)
        const needed = emptyDirs.reduce((sum, size) => sum + size, 0) + KUBELET_LOGS_BYTES
        assert.ok(limit >= needed, `${container.name}: ${limit / 2 ** 20} MiB, below its emptyDirs and logs (${needed / 2 ** 20} MiB)`)
      }
    })

    it('stops serving only after the endpoint is gone, and is given the time to drain', () => {
      const { shutdownDelay } = config()
      assert.ok(shutdownDelay >= ENDPOINT_PROPAGATION_S, `SHUTDOWN_DELAY ${shutdownDelay} s, below the endpoint's propagation (${ENDPOINT_PROPAGATION_S} s)`)
      const grace = pod().terminationGracePeriodSeconds ?? 30
      const needed = shutdownDelay + SHUTDOWN_TIMEOUT_MS / 1000 + GRACE_MARGIN_S
      assert.ok(grace >= needed, `terminationGracePeriodSeconds ${grace}, below SHUTDOWN_DELAY + the drain's limit + ${GRACE_MARGIN_S} s (${needed})`)
    })

    it('has a Service that selects the pods and reaches their API port', () => {
      const service = new Service(only(objects, 'Service') as unknown as Service)
      const labels = deployment().spec!.template.metadata?.labels
      assert.ok(includes(labels, deployment().spec!.selector.matchLabels), 'the Deployment selects its pods')
      assert.ok(includes(labels, service.spec?.selector), 'the Service selects the pods')
      const targets = service.spec!.ports!.map((port) => containerPort(petstore(), port.targetPort))
      assert.ok(targets.includes(config().port), 'a Service port reaches PORT')
      assert.ok(targets.every((target) => target !== undefined), 'every Service port reaches a container port')
    })

    it('serves metrics on their own port, announced to Prometheus and reachable only from the namespace monitoring', () => {
      const { metricsPort, metricsHost } = config()
      assert.equal(metricsHost, '0.0.0.0')
      assert.equal(containerPort(petstore(), 'metrics'), metricsPort)
      assert.deepEqual(deployment().spec!.template.metadata?.annotations, {
        'prometheus.io/scrape': 'true', 'prometheus.io/port': String(metricsPort), 'prometheus.io/path': '/metrics'
      })
      const opened = ingressRules(objects, petstore())
      assert.deepEqual(opened.get(config().port), [undefined], 'the API port from anywhere, by one rule')
      assert.deepEqual(opened.get(metricsPort), [[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]], 'metrics from the namespace monitoring alone')
      assert.deepEqual([...opened.keys()].sort(), [config().port, metricsPort].sort(), 'no other port')
    })

    it('names Prometheus\'s namespace in one place, which an overlay\'s patch of petstore-metrics moves', () => {
      const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'deploy/kubernetes'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean)
      const naming = files.filter((file) => /kubernetes\.io\/metadata\.name: monitoring/.test(readFileSync(join(ROOT, file), 'utf8')))
      assert.deepEqual(naming, ['deploy/kubernetes/base/network-policy.yaml'])
      const moved = renderOnTop([overlayDir(overlay)], {
        patches: [{
          target: { kind: 'NetworkPolicy', name: 'petstore-metrics' },
          patch: 'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: petstore-metrics\nspec:\n  ingress:\n    - ports:\n        - port: metrics\n      from:\n        - namespaceSelector:\n            matchLabels:\n              kubernetes.io/metadata.name: prometheus\n'
        }]
      })
      const opened = ingressRules(moved, containerOf(deploymentOf(moved)))
      assert.deepEqual(opened.get(config().metricsPort), [[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'prometheus' } } }]])
      assert.deepEqual(opened.get(config().port), [undefined], 'the API port untouched')
    })

    it('runs as the image\'s user on a read-only root, with no capability, privilege escalation or service account token', () => {
      assert.ok(Number.isInteger(IMAGE_UID), 'the Dockerfile\'s useradd --uid')
      const podContext = pod().securityContext
      assert.equal(pod().automountServiceAccountToken, false)
      for (const container of containers()) {
        const context = { ...podContext, ...container.securityContext }
        assert.equal(context.runAsNonRoot, true, container.name)
        assert.equal(context.runAsUser, IMAGE_UID, `${container.name}: runAsUser is the image's uid`)
        assert.equal(context.seccompProfile?.type, 'RuntimeDefault', container.name)
        assert.equal(container.securityContext?.readOnlyRootFilesystem, true, container.name)
        assert.equal(container.securityContext?.allowPrivilegeEscalation, false, container.name)
        assert.deepEqual(container.securityContext?.capabilities, { drop: ['ALL'] }, container.name)
        assert.notEqual(container.securityContext?.privileged, true, container.name)
      }
    })

    it('mounts a volume wherever the service writes: TMPDIR an emptyDir, and an SQLite file\'s folder the claim', () => {
      const volumes = new Map((pod().volumes ?? []).map((volume) => [volume.name, volume]))
      const mounted = (container: IContainer, path: string): string | undefined => container.volumeMounts?.find((mount) => mount.mountPath === path)?.name
      for (const container of containers()) {
        const config = serviceConfig(container)
        const tmp = container.env?.find((variable) => variable.name === 'TMPDIR')?.value
        assert.ok(tmp !== undefined, `${container.name}: TMPDIR`)
        assert.ok(volumes.get(mounted(container, tmp) ?? '')?.emptyDir !== undefined, `${container.name}: an emptyDir on ${tmp}`)
        if (config.databaseUrl.startsWith('sqlite:')) {
          const folder = config.databaseUrl.slice('sqlite:'.length).replace(/\/[^/]+$/, '')
          assert.ok(volumes.get(mounted(container, folder) ?? '')?.persistentVolumeClaim !== undefined, `${container.name}: the claim on ${folder}`)
        }
      }
    })

    it('fits WORKERS and memory in the resources: WORKERS at most the CPU (limit, else request) rounded down, memory above each process\'s peak RSS', () => {
      const { workers } = config()
      const { requests, limits } = petstore().resources ?? {}
      const cpu = quantity(limits?.cpu ?? requests?.cpu)
      assert.ok(cpu !== undefined, 'a CPU request')
      assert.ok(workers >= 1 && workers <= Math.floor(cpu), `WORKERS=${workers} with ${cpu} CPU`)
      // With several workers a primary runs beside them, counted as one more process.
      const processes = workers + (workers > 1 ? 1 : 0)
      const memory = quantity(limits?.memory)
      assert.ok(memory !== undefined, 'a memory limit')
      const needed = processes * PEAK_RSS_MIB[overlay] * 2 ** 20
      assert.ok(memory >= needed, `a memory limit of ${memory / 2 ** 20} MiB, below ${processes} × ${PEAK_RSS_MIB[overlay]} MiB`)
      assert.equal(quantity(requests?.memory), memory, 'the memory request is the limit: a pod is never killed for memory it was promised')
      assert.equal(limits?.cpu, undefined, 'no CPU limit: its quota serves in bursts (docs/deployment.md#kubernetes)')
      const migrate = containerOf(deployment(), 'migrate').resources
      assert.ok(quantity(migrate?.limits?.memory) === quantity(migrate?.requests?.memory) && quantity(migrate?.limits?.memory)! >= PEAK_RSS_MIB[overlay] * 2 ** 20,
        'the init container\'s memory, a request equal to its limit, above the peak RSS of a serving process')
    })

    it('migrates in an init container, with the service\'s image and database, before the pod serves', () => {
      const migrate = containerOf(deployment(), 'migrate')
      assert.deepEqual(pod().initContainers?.map((container) => container.name), ['migrate'])
      assert.deepEqual(migrate.args, ['petstore', 'migrate'])
      assert.equal(migrate.image, petstore().image)
      const source = (container: IContainer): unknown => container.env?.find((variable) => variable.name === 'DATABASE_URL')
      assert.deepEqual(source(migrate), source(petstore()), 'the same DATABASE_URL')
      assert.equal(serviceConfig(migrate).databaseUrl, config().databaseUrl)
    })

    it('carries no Secret value: none rendered or written in the repository, credentials only from a Secret\'s keys', () => {
      assert.deepEqual(objects.filter((object) => object.kind === 'Secret'), [])
      const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.yaml', '*.yml'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean)
      assert.ok(files.some((file) => file.startsWith('deploy/kubernetes/')), files.join(', '))
      for (const file of files) {
        for (const document of parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))) {
          const object = document.toJS() as Record<string, unknown> & { metadata?: { annotations?: Record<string, string> } }
          // A Secret's name alone, for kustomize to rename its references (never applied), holds nothing.
          if (object.kind === 'Secret') {
            assert.equal(object.metadata?.annotations?.['config.kubernetes.io/local-config'], 'true', `${file}: a Secret that would be applied`)
            assert.ok(!('data' in object) && !('stringData' in object), `${file}: a Secret with values`)
          }
          assert.ok(!('secretGenerator' in object), `${file}: a secretGenerator`)
        }
      }
      for (const container of containers()) {
        for (const variable of container.env ?? []) {
          assert.doesNotMatch(variable.value ?? '', /:\/\/[^/@\s]*:[^/@\s]*@/, `${container.name}: ${variable.name} holds a password`)
          if (variable.name in FROM_SECRET && variable.value !== undefined) assert.fail(`${container.name}: ${variable.name} written in the manifest`)
        }
      }
    })

    if (overlay === 'sqlite') {
      it('runs one pod, never two on the file: one replica, Recreate, a ReadWriteOncePod claim, no autoscaler', () => {
        assert.equal(deployment().spec!.replicas, 1)
        assert.deepEqual(deployment().spec!.strategy, { type: 'Recreate' })
        const claim = new PersistentVolumeClaim(only(objects, 'PersistentVolumeClaim') as unknown as PersistentVolumeClaim)
        assert.deepEqual(claim.spec?.accessModes, ['ReadWriteOncePod'])
        assert.deepEqual((pod().volumes ?? []).flatMap((volume) => volume.persistentVolumeClaim?.claimName ?? []), [claim.metadata!.name])
        assert.deepEqual(objects.filter((object) => ['HorizontalPodAutoscaler', 'PodDisruptionBudget'].includes(object.kind)), [])
      })

      it('runs before Kubernetes 1.32 with components/sqlite-readwriteonce: a ReadWriteOnce claim, still one pod replaced with Recreate', () => {
        const fallback = renderWith('sqlite', ['sqlite-readwriteonce'])
        const claim = only(fallback, 'PersistentVolumeClaim') as unknown as PersistentVolumeClaim
        assert.deepEqual(claim.spec?.accessModes, ['ReadWriteOnce'], 'a claim the kubelet applies fsGroup to before 1.32')
        assert.equal(deploymentOf(fallback).spec!.replicas, 1)
        assert.deepEqual(deploymentOf(fallback).spec!.strategy, { type: 'Recreate' })
        assert.equal(deploymentOf(fallback).spec!.template.spec!.securityContext?.fsGroup, IMAGE_UID, 'fsGroup makes the fresh volume the image user\'s')
        const deploymentDocs = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8')
        assert.match(deploymentDocs, /components\/sqlite-readwriteonce/, 'docs/deployment.md names the component')
        assert.match(deploymentDocs, /kubernetes\/kubernetes#128244/, 'docs/deployment.md gives the fix it stands in for')
      })
    } else {
      it('replaces pods one at a time, a new one ready before an old one stops; the autoscaler owns their count', () => {
        assert.equal(deployment().spec!.replicas, undefined, 'no replicas: the HorizontalPodAutoscaler owns the count')
        const strategy = deployment().spec!.strategy
        assert.equal(strategy?.type, 'RollingUpdate')
        assert.equal(strategy?.rollingUpdate?.maxUnavailable, 0)
        assert.ok(Number(strategy?.rollingUpdate?.maxSurge) >= 1)
        const autoscaler = new HorizontalPodAutoscaler(only(objects, 'HorizontalPodAutoscaler') as unknown as HorizontalPodAutoscaler)
        assert.deepEqual(autoscaler.spec!.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment().metadata!.name })
        assert.ok((autoscaler.spec!.minReplicas ?? 1) >= 2, 'several pods')
        assert.ok(autoscaler.spec!.metrics?.some((metric) => metric.type === 'Resource' && metric.resource?.name === 'cpu'), 'scaled on CPU')
      })

      it('lets a node drain evict one pod at a time, and any pod that is not ready: maxUnavailable 1, unhealthyPodEvictionPolicy AlwaysAllow', () => {
        const budget = new PodDisruptionBudget(only(objects, 'PodDisruptionBudget') as unknown as PodDisruptionBudget)
        assert.equal(budget.spec!.maxUnavailable, 1)
        assert.equal(budget.spec!.minAvailable, undefined)
        assert.equal(budget.spec!.unhealthyPodEvictionPolicy, 'AlwaysAllow', 'pods that never become ready hold no drain')
        assert.ok(includes(deployment().spec!.template.metadata?.labels, budget.spec!.selector?.matchLabels))
      })

      it('counts a new pod available only once its endpoint has reached every node: minReadySeconds above ENDPOINT_PROPAGATION_S', () => {
        const minReady = deployment().spec!.minReadySeconds ?? 0
        assert.ok(minReady > ENDPOINT_PROPAGATION_S, `minReadySeconds ${minReady}, not above the endpoint's propagation (${ENDPOINT_PROPAGATION_S} s)`)
      })

      it('takes DATABASE_URL, and REDIS_URL when set, from the Secret petstore', () => {
        for (const container of containers()) {
          const database = container.env?.find((variable) => variable.name === 'DATABASE_URL')
          assert.deepEqual(database?.valueFrom, { secretKeyRef: { name: 'petstore', key: 'DATABASE_URL' } }, container.name)
        }
        const redis = petstore().env?.find((variable) => variable.name === 'REDIS_URL')
        assert.deepEqual(redis?.valueFrom, { secretKeyRef: { name: 'petstore', key: 'REDIS_URL', optional: true } })
      })
    }
  })
}
