/**
 * deploy/kubernetes as a cluster receives it: each overlay rendered by kubectl's kustomize, every
 * object validated against the Kubernetes API's own schemas (kubernetes-models; the ServiceMonitor
 * with @kubernetes-models/prometheus-operator), then the rules between the objects and the service
 * that no schema knows, each read from where its fact lives: the Dockerfile, the settings of
 * src/config.ts, the drain limit of src/process/server.ts, docs/performance.md's peak RSS, the HA
 * leg's failover bound. The schemas refuse a wrong type or value, not an unknown field: a
 * misspelt field is caught by the rule that needs it.
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
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor'
import { parseConfig, type Config } from '../../src/config.js'
import { SHUTDOWN_TIMEOUT_MS } from '../../src/process/server.js'
import { ROOT } from '../support/constants.js'
import { FAILOVER_BOUND_MS } from '../support/ha-cluster.js'
import { skippedFile, startTestServer, type TestServer } from '../support/helper.js'
import {
  containerOf, deploymentOf, ENDPOINT_PROPAGATION_S, KUBERNETES_DIR, kubectlMissing, only, OVERLAYS, overlayDir,
  renderOnTop, renderOverlay, SERVICE_MONITOR_COMPONENT, type KubernetesObject, type Overlay
} from '../support/kubernetes.js'

/** After the drain, the process still closes its store and writes its last lines before it exits. */
const GRACE_MARGIN_S = 5
/** A Kubernetes probe's defaults, for a field the manifest leaves out. */
const PROBE_DEFAULTS = { periodSeconds: 10, failureThreshold: 3 }
/** Values for the variables a pod takes from its Secret: the settings are parsed with these in their place. */
const FROM_SECRET: Record<string, string> = { DATABASE_URL: 'postgres://petstore@database.invalid:5432/petstore', REDIS_URL: 'redis://redis.invalid:6379' }

const skip = kubectlMissing()
if (skip !== false) skippedFile(`Kubernetes manifest tests skipped: ${skip}`)

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
/** The runtime stage: what follows the last FROM, continuation lines joined. */
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')).replaceAll('\\\n', ' ')
const IMAGE_UID = Number(/--uid (\d+)/.exec(runtimeStage)?.[1])
const IMAGE_ENV = Object.fromEntries(runtimeStage.split('\n').filter((line) => line.startsWith('ENV '))
  .flatMap((line) => line.slice(4).trim().split(/\s+/)).map((pair) => pair.split('=', 2) as [string, string]))

/** The service's peak RSS per serving process, in MiB, on each database: the top of docs/performance.md's range. */
const PEAK_RSS_MIB = ((): Record<Overlay, number> => {
  const text = readFileSync(join(ROOT, 'docs/performance.md'), 'utf8')
  const match = /Peak RSS[^:]*: the service \d+ to (\d+) MiB on SQLite and \d+ to (\d+) MiB on PostgreSQL/.exec(text)
  assert.ok(match !== null, 'docs/performance.md states the service\'s peak RSS')
  return { sqlite: Number(match[1]), postgres: Number(match[2]) }
})()

/** The scrape job deploy/prometheus's rules expect. */
const RULES_JOB = /up\{job="([^"]+)"\}/.exec(readFileSync(join(ROOT, 'deploy/prometheus/petstore.rules.yml'), 'utf8'))?.[1]

/** A Kubernetes quantity as a number: cores for CPU, bytes for memory. */
function quantity (value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(value))
  assert.ok(match !== null, `not a quantity: ${value}`)
  const factors: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }
  return Number(match[1]) * (match[2] === undefined ? 1 : factors[match[2]]!)
}

/** What `petstore serve` in this container runs on: the image's environment, then the container's. */
function serviceConfig (container: IContainer): Config {
  const env: Record<string, string> = { ...IMAGE_ENV }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value
    else if (variable.valueFrom?.secretKeyRef !== undefined) env[variable.name] = FROM_SECRET[variable.name] ?? 'from-a-secret'
  }
  return parseConfig(env)
}

/** The container port a probe or a Service names (by name or number). */
function containerPort (container: IContainer, port: string | number | undefined): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((candidate) => candidate.name === port)?.containerPort
}

const includes = (labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean =>
  Object.keys(selector ?? {}).length > 0 && Object.entries(selector!).every(([key, value]) => labels?.[key] === value)

type Model = new (data: unknown) => { validate: () => void }

/** kubernetes-models' class of the object's apiVersion and kind (the Prometheus Operator's from its package). */
async function modelOf (object: KubernetesObject): Promise<Model> {
  const pkg = object.apiVersion.startsWith('monitoring.coreos.com/') ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models'
  const module = await import(`${pkg}/${object.apiVersion}/${object.kind}`) as Record<string, Model | undefined>
  const model = module[object.kind]
  assert.ok(model !== undefined, `no model of ${object.apiVersion} ${object.kind}`)
  return model
}

describe('deploy/kubernetes: every rendered object valid against the Kubernetes API\'s schemas', { skip }, () => {
  const renderings: Array<{ label: string, render: () => KubernetesObject[] }> = OVERLAYS.flatMap((overlay) => [
    { label: `overlays/${overlay}`, render: () => renderOverlay(overlay) },
    { label: `overlays/${overlay} with components/service-monitor`, render: () => renderOnTop([overlayDir(overlay)], {}, [SERVICE_MONITOR_COMPONENT]) }
  ])
  for (const { label, render } of renderings) {
    it(`validates ${label}`, async () => {
      const objects = render()
      for (const object of objects) {
        const Model = await modelOf(object)
        assert.doesNotThrow(() => new Model(object).validate(), `${object.kind} ${object.metadata.name}`)
      }
      console.log(`${label}: ${objects.length} objects valid: ${objects.map((object) => object.kind).join(', ')}`)
    })
  }

  it('refuses what the API would: a port by name where a number goes, an access mode outside its list', async () => {
    const objects = renderOverlay('sqlite')
    const deployment = structuredClone(only(objects, 'Deployment')) as unknown as { spec: { template: { spec: { containers: Array<{ ports: Array<{ containerPort: unknown }> }> } } } }
    deployment.spec.template.spec.containers[0]!.ports[0]!.containerPort = 'http'
    const Deployment = await modelOf(only(objects, 'Deployment'))
    assert.throws(() => new Deployment(deployment).validate(), /containerPort must be integer/)
    const claim = { ...only(objects, 'PersistentVolumeClaim'), spec: { accessModes: 'ReadWriteOncePod' } }
    assert.throws(() => new PersistentVolumeClaim(claim as unknown as PersistentVolumeClaim).validate(), /accessModes must be array/)
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

    it('probes what the service serves: readiness on /readyz, liveness and start-up on /healthz, on the port it listens on', async () => {
      const { port, host } = config()
      assert.equal(host, '0.0.0.0', 'the kubelet probes the pod\'s address: HOST is every interface')
      const probes: Array<[string, IProbe | undefined, string]> = [
        ['readiness', petstore().readinessProbe, '/readyz'],
        ['liveness', petstore().livenessProbe, '/healthz'],
        ['startup', petstore().startupProbe, '/healthz']
      ]
      for (const [name, probe, path] of probes) {
        assert.equal(probe?.httpGet?.path, path, `${name} probe`)
        assert.equal(containerPort(petstore(), probe.httpGet.port), port, `${name} probe's port is PORT`)
        assert.equal((await fetch(`${server.origin}${path}`)).status, 200, `${path} answers`)
      }
    })

    it('keeps every pod in the Service through a database failover: readiness gives up after more than FAILOVER_BOUND_MS', () => {
      const probe = { ...PROBE_DEFAULTS, ...petstore().readinessProbe }
      const givesUpAfterMs = probe.periodSeconds * probe.failureThreshold * 1000
      assert.ok(givesUpAfterMs > FAILOVER_BOUND_MS, `readiness gives up after ${givesUpAfterMs} ms, within a failover (${FAILOVER_BOUND_MS} ms)`)
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
      const policy = new NetworkPolicy(only(objects, 'NetworkPolicy') as unknown as NetworkPolicy)
      assert.ok(includes(deployment().spec!.template.metadata?.labels, policy.spec!.podSelector.matchLabels), 'the policy selects the pods')
      assert.deepEqual(policy.spec!.policyTypes, ['Ingress'])
      const rules = policy.spec!.ingress ?? []
      const opens = (rule: typeof rules[number], port: number): boolean => (rule.ports ?? []).some((candidate) => containerPort(petstore(), candidate.port) === port)
      assert.ok(rules.some((rule) => opens(rule, config().port) && rule.from === undefined), 'the API port from anywhere')
      const metricsRules = rules.filter((rule) => opens(rule, metricsPort))
      assert.ok(metricsRules.length > 0)
      for (const rule of metricsRules) {
        assert.deepEqual(rule.from, [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], 'metrics from the namespace monitoring alone')
      }
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
      const files = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean)
      assert.ok(files.some((file) => file.startsWith('deploy/kubernetes/')), files.join(', '))
      for (const file of files) {
        for (const document of parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))) {
          const object = document.toJS() as Record<string, unknown>
          assert.notEqual(object.kind, 'Secret', file)
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

      it('lets a node drain evict one pod at a time: a PodDisruptionBudget of maxUnavailable 1 over the pods', () => {
        const budget = new PodDisruptionBudget(only(objects, 'PodDisruptionBudget') as unknown as PodDisruptionBudget)
        assert.equal(budget.spec!.maxUnavailable, 1)
        assert.equal(budget.spec!.minAvailable, undefined)
        assert.ok(includes(deployment().spec!.template.metadata?.labels, budget.spec!.selector?.matchLabels))
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

describe('deploy/kubernetes/components/service-monitor', { skip }, () => {
  for (const overlay of OVERLAYS) {
    it(`scrapes the metrics port of overlays/${overlay}'s Service, as the job deploy/prometheus's rules expect`, () => {
      const objects = renderOnTop([overlayDir(overlay)], {}, [SERVICE_MONITOR_COMPONENT])
      const monitor = new ServiceMonitor(only(objects, 'ServiceMonitor') as unknown as ServiceMonitor)
      const service = new Service(only(objects, 'Service') as unknown as Service)
      const petstore = containerOf(deploymentOf(objects))
      assert.ok(includes(service.metadata?.labels, monitor.spec.selector.matchLabels), 'the ServiceMonitor selects the Service')
      assert.equal(monitor.spec.jobLabel, undefined, 'the job is the Service\'s name')
      assert.equal(service.metadata?.name, RULES_JOB)
      const [endpoint] = monitor.spec.endpoints ?? []
      assert.equal(monitor.spec.endpoints?.length, 1)
      assert.equal(endpoint!.path, '/metrics')
      const port = service.spec!.ports!.find((candidate) => candidate.name === endpoint!.port)
      assert.equal(containerPort(petstore, port?.targetPort), serviceConfig(petstore).metricsPort)
    })
  }
})
