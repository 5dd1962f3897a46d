/**
 * deploy/kubernetes's Components, each added with one line beside either overlay, held to what
 * they promise: installs that keep to their own pods whatever their prefix, monitoring that finds
 * them under the job name the rules expect, a route whose host is PUBLIC_BASE_URL's and which needs
 * its proxies named, CloudNativePG reached through its Pooler with the operator's credentials, and
 * the egress a default-deny namespace needs. Their objects' validity against their schemas is
 * kubernetes.test.ts's, with every overlay.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parse, parseAllDocuments } from 'yaml'
import { Gateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway'
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IService } from 'kubernetes-models/v1/Service'
import { parseConfig } from '../../src/config.js'
import { prometheusRuleOf } from '../../scripts/generate-prometheus-rule.js'
import { ROOT } from '../support/constants.js'
import { skippedFile } from '../support/helper.js'
import { valuesAt, type CelRule } from '../support/crds.js'
import {
  containerOf, deploymentOf, KUBERNETES_DIR, kubectlMissing, only, OVERLAYS, publicSettings, PUBLIC_SETTINGS, renderTree, renderWith,
  selectorsOf, serviceConfig, type Component, type KubernetesObject
} from '../support/kubernetes.js'
import { crdOf } from '../support/kubernetes-schemas.js'

const skip = kubectlMissing()
if (skip !== false) skippedFile(`Kubernetes component tests skipped: ${skip}`)

const RULES_FILE = join(ROOT, 'deploy/prometheus/petstore.rules.yml')
const PROMETHEUS_RULE_FILE = join(KUBERNETES_DIR, 'components/prometheus-rule/prometheus-rule.yaml')
const RULES_TEXT = readFileSync(RULES_FILE, 'utf8')
/** The scrape job deploy/prometheus's rules expect. */
const RULES_JOB = /up\{job="([^"]+)"\}/.exec(RULES_TEXT)?.[1]
const DEPLOYMENT_DOCS = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8')

const includes = (labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean =>
  Object.keys(selector ?? {}).length > 0 && Object.entries(selector!).every(([key, value]) => labels?.[key] === value)
const envOf = (container: IContainer, name: string): NonNullable<IContainer['env']>[number] | undefined => container.env?.find((variable) => variable.name === name)
const all = <T>(objects: KubernetesObject[], kind: string): T[] => objects.filter((object) => object.kind === kind) as unknown as T[]

/** Prometheus's name for a Kubernetes label a ServiceMonitor's targetLabels copies: every character a label name cannot hold becomes `_`. */
const prometheusLabel = (label: string): string => label.replace(/[^a-zA-Z0-9_]/g, '_')

/** The files of deploy/kubernetes in which `text` appears. */
function filesWith (text: RegExp): string[] {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'deploy/kubernetes'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean)
  return files.filter((file) => text.test(readFileSync(join(ROOT, file), 'utf8')))
}

/** True for an address or a range no wider than one proxy's subnet (/24 in IPv4, /64 in IPv6). */
function narrow (entry: string): boolean {
  const [address = '', prefix] = entry.split('/')
  if (prefix === undefined) return true
  return Number(prefix) >= (address.includes(':') ? 64 : 24)
}

describe('deploy/kubernetes/components: monitoring (service-monitor, prometheus-rule, prometheus-labels)', { skip }, () => {
  for (const overlay of OVERLAYS) {
    it(`scrapes overlays/${overlay}'s metrics port as the job ${String(RULES_JOB)}, whatever prefix an overlay adds`, () => {
      const objects = renderWith(overlay, ['service-monitor'], { namePrefix: 'staging-' })
      const monitor = only(objects, 'ServiceMonitor') as unknown as { spec: { jobLabel?: string, targetLabels?: string[], selector: { matchLabels: Record<string, string> }, endpoints: Array<{ port: string, path: string }> } }
      const service = only(objects, 'Service') as unknown as IService
      assert.equal(service.metadata?.name, 'staging-petstore', 'the prefix renames the Service, and with it a job named after it')
      assert.ok(includes(service.metadata?.labels, monitor.spec.selector.matchLabels), 'the ServiceMonitor selects the Service')
      assert.ok(monitor.spec.jobLabel !== undefined, 'the job is a label\'s value, not the Service\'s name')
      assert.equal(service.metadata?.labels?.[monitor.spec.jobLabel], RULES_JOB, 'the job is the one the rules expect')
      assert.equal(monitor.spec.endpoints.length, 1)
      const [endpoint] = monitor.spec.endpoints
      assert.equal(endpoint!.path, '/metrics')
      const petstore = containerOf(deploymentOf(objects))
      const port = service.spec!.ports!.find((candidate) => candidate.name === endpoint!.port)
      assert.equal(petstore.ports?.find((candidate) => candidate.name === port?.targetPort)?.containerPort, serviceConfig(petstore).metricsPort)
    })
  }

  it('keeps two installs apart in every rule: each aggregation by namespace and by the install label the ServiceMonitor copies', () => {
    const objects = renderWith('postgres', ['service-monitor'])
    const { targetLabels } = (only(objects, 'ServiceMonitor') as unknown as { spec: { targetLabels?: string[] } }).spec
    assert.deepEqual(targetLabels, ['app.kubernetes.io/instance'])
    const install = prometheusLabel(targetLabels![0]!)
    const aggregations = [...RULES_TEXT.matchAll(/\b(?:sum|max|min|avg|count) by \(([^)]*)\)/g)].map((match) => match[1]!.split(',').map((label) => label.trim()))
    assert.ok(aggregations.length >= 20, `${aggregations.length} aggregations`)
    for (const labels of aggregations) {
      assert.ok(labels.includes('job') && labels.includes('namespace') && labels.includes(install), `by (${labels.join(', ')}): job, namespace and ${install}`)
    }
    assert.match(DEPLOYMENT_DOCS, new RegExp(`target_label: ${install}`), 'the docs\' relabeling for annotation-based scraping gives the same label')
  })

  it('carries the rules of deploy/prometheus as its PrometheusRule: generated from the rules file, the same groups', () => {
    assert.equal(readFileSync(PROMETHEUS_RULE_FILE, 'utf8'), prometheusRuleOf(RULES_TEXT), 'run npm run generate:prometheus-rule')
    const rule = only(renderWith('postgres', ['prometheus-rule']), 'PrometheusRule') as unknown as { spec: { groups: unknown } }
    assert.deepEqual(rule.spec.groups, (parse(RULES_TEXT) as { groups: unknown }).groups)
  })

  it('sets the label the Prometheus Operator selects on in one place, for the ServiceMonitor and the PrometheusRule alike, which an overlay\'s patch changes', () => {
    assert.deepEqual(filesWith(/\/metadata\/labels\/release|\brelease:/), ['deploy/kubernetes/components/prometheus-labels/kustomization.yaml'])
    const objects = renderWith('postgres', ['service-monitor', 'prometheus-rule'])
    const releases = objects.filter((object) => object.apiVersion.startsWith('monitoring.coreos.com/')).map((object) => object.metadata.labels?.release)
    assert.deepEqual(releases, ['kube-prometheus-stack', 'kube-prometheus-stack'])
    const mine = renderWith('postgres', ['service-monitor', 'prometheus-rule'], {
      patches: [{ target: { group: 'monitoring.coreos.com' }, patch: '- op: add\n  path: /metadata/labels/release\n  value: monitoring' }]
    })
    assert.deepEqual(mine.filter((object) => object.apiVersion.startsWith('monitoring.coreos.com/')).map((object) => object.metadata.labels?.release), ['monitoring', 'monitoring'])
  })
})

describe('deploy/kubernetes/components: http-route and ingress', { skip }, () => {
  const host = new URL(PUBLIC_SETTINGS.PUBLIC_BASE_URL).host

  for (const overlay of OVERLAYS) {
    for (const component of ['http-route', 'ingress'] as const) {
      it(`routes ${host} to overlays/${overlay}'s API port (${component}), PUBLIC_BASE_URL and TRUST_PROXY from the overlay's petstore-public`, () => {
        const objects = renderWith(overlay, [component], { namePrefix: 'staging-' })
        const service = only(objects, 'Service') as unknown as IService
        const petstore = containerOf(deploymentOf(objects))
        const config = serviceConfig(petstore)
        assert.equal(config.publicBaseUrl, PUBLIC_SETTINGS.PUBLIC_BASE_URL)
        assert.deepEqual(config.trustProxy, PUBLIC_SETTINGS.TRUST_PROXY.split(','))
        assert.deepEqual(objects.filter((object) => object.kind === 'ConfigMap' || object.kind === 'Secret'), [], 'petstore-public is read at render, not applied')
        const apiPort = service.spec!.ports!.find((port) => petstore.ports?.find((candidate) => candidate.name === port.targetPort)?.containerPort === config.port)
        assert.ok(apiPort !== undefined, 'a Service port reaches PORT')
        const paths: string[] = []
        if (component === 'http-route') {
          const route = only(objects, 'HTTPRoute') as unknown as IHTTPRoute
          assert.deepEqual(route.spec.hostnames, [host])
          for (const rule of route.spec.rules ?? []) {
            assert.deepEqual(rule.backendRefs?.map((ref) => [ref.name, ref.port]), [[service.metadata!.name, apiPort.port]], 'the prefixed Service\'s API port')
            paths.push(...(rule.matches ?? []).map((match) => match.path?.value ?? ''))
          }
        } else {
          const ingress = only(objects, 'Ingress') as unknown as IIngress
          assert.deepEqual(ingress.spec!.rules!.map((rule) => rule.host), [host])
          assert.deepEqual(ingress.spec!.tls, [{ hosts: [host], secretName: 'staging-petstore-tls' }], 'TLS for the host, its Secret renamed with the prefix')
          for (const path of ingress.spec!.rules![0]!.http!.paths) {
            assert.deepEqual([path.backend.service?.name, path.backend.service?.port?.name], [service.metadata!.name, apiPort.name])
            paths.push(path.path ?? '')
          }
        }
        assert.deepEqual(paths.sort(), ['/docs', new URL(config.publicBaseUrl!).pathname].sort(), 'the API under PUBLIC_BASE_URL\'s path and its reference page, not the probes')
      })
    }
  }

  it('fails to render without the team\'s TRUST_PROXY or PUBLIC_BASE_URL: no default to fall back on', () => {
    for (const component of ['http-route', 'ingress'] as const) {
      assert.throws(() => renderWith('postgres', [component], { configMapGenerator: [] }), /petstore-public/, `${component} without petstore-public`)
      assert.throws(() => renderWith('postgres', [component], { configMapGenerator: [publicSettings({ PUBLIC_BASE_URL: PUBLIC_SETTINGS.PUBLIC_BASE_URL })] }), /TRUST_PROXY/, `${component} without TRUST_PROXY`)
      assert.throws(() => renderWith('postgres', [component], { configMapGenerator: [publicSettings({ TRUST_PROXY: PUBLIC_SETTINGS.TRUST_PROXY })] }), /PUBLIC_BASE_URL/, `${component} without PUBLIC_BASE_URL`)
    }
  })

  it('ships no TRUST_PROXY value, and the docs\' examples name narrow ranges: a broad one lets any pod in it pose as any client', () => {
    assert.deepEqual(filesWith(/TRUST_PROXY=/), [], 'no value under deploy/kubernetes')
    const examples = [...DEPLOYMENT_DOCS.matchAll(/TRUST_PROXY=([^\s`]+)/g)].map((match) => match[1]!)
    assert.ok(examples.length > 0, 'docs/deployment.md shows TRUST_PROXY set')
    for (const value of [...examples, PUBLIC_SETTINGS.TRUST_PROXY]) {
      for (const entry of value.split(',')) assert.ok(narrow(entry), `${entry}: broader than one proxy's subnet`)
      assert.doesNotThrow(() => parseConfig({ TRUST_PROXY: value }), value)
    }
  })

  it('hangs the HTTPRoute on a Gateway like the docs\' one: its HTTPS listener of the same host ends TLS and admits the route', () => {
    const gatewayYaml = /```yaml\n(apiVersion: gateway\.networking\.k8s\.io\/v1\nkind: Gateway\n[\s\S]*?)```/.exec(DEPLOYMENT_DOCS)?.[1]
    assert.ok(gatewayYaml !== undefined, 'docs/deployment.md shows a Gateway')
    const gateway = new Gateway(parse(gatewayYaml) as Gateway)
    assert.doesNotThrow(() => gateway.validate())
    const route = only(renderWith('postgres', ['http-route']), 'HTTPRoute') as unknown as IHTTPRoute
    const [parent] = route.spec.parentRefs ?? []
    assert.deepEqual([parent?.name, parent?.namespace], [gateway.metadata?.name, gateway.metadata?.namespace])
    const listener = gateway.spec.listeners.find((candidate) => candidate.name === parent?.sectionName)
    assert.ok(listener !== undefined, `a listener ${String(parent?.sectionName)}`)
    assert.equal(listener.protocol, 'HTTPS')
    assert.equal(listener.tls?.mode ?? 'Terminate', 'Terminate')
    assert.ok((listener.tls?.certificateRefs ?? []).length > 0, 'the listener holds the certificate')
    assert.equal(listener.hostname, route.spec.hostnames?.[0])
    assert.ok(['All', 'Selector'].includes(listener.allowedRoutes?.namespaces?.from ?? 'Same'), 'routes from the service\'s namespace are admitted')
  })
})

/**
 * What the test asserts for each CEL rule of CloudNativePG's Cluster and Pooler, by its text: a
 * check of the value at its path, or why it cannot apply to an object being created.
 */
const CEL_CHECKS: Record<string, ((self: any) => boolean) | { transition: string }> = {
  '!(has(self.imageCatalogRef) && has(self.imageName))': (self) => !(self.imageCatalogRef !== undefined && self.imageName !== undefined),
  '!has(self.builtinLocale) || self.localeProvider == \'builtin\'': (self) => self.builtinLocale === undefined || self.localeProvider === 'builtin',
  '!has(self.icuLocale) || self.localeProvider == \'icu\'': (self) => self.icuLocale === undefined || self.localeProvider === 'icu',
  '!has(self.icuRules) || self.localeProvider == \'icu\'': (self) => self.icuRules === undefined || self.localeProvider === 'icu',
  'self.kind == \'ImageCatalog\' || self.kind == \'ClusterImageCatalog\'': (self) => ['ImageCatalog', 'ClusterImageCatalog'].includes(self.kind),
  'self.apiGroup == \'postgresql.cnpg.io\'': (self) => self.apiGroup === 'postgresql.cnpg.io',
  '!(has(self.syncReplicaElectionConstraint) && self.syncReplicaElectionConstraint.enabled && has(self.synchronous) && ((has(self.synchronous.podFailureDomainKeys) && self.synchronous.podFailureDomainKeys.size() > 0) || (has(self.synchronous.nodeFailureDomainKeys) && self.synchronous.nodeFailureDomainKeys.size() > 0)))': (self) =>
    !(self.syncReplicaElectionConstraint?.enabled === true && ((self.synchronous?.podFailureDomainKeys ?? []).length > 0 || (self.synchronous?.nodeFailureDomainKeys ?? []).length > 0)),
  'self.dataDurability!=\'preferred\' || ((!has(self.standbyNamesPre) || self.standbyNamesPre.size()==0) && (!has(self.standbyNamesPost) || self.standbyNamesPost.size()==0))': (self) =>
    self.dataDurability !== 'preferred' || ((self.standbyNamesPre ?? []).length === 0 && (self.standbyNamesPost ?? []).length === 0),
  '!(has(self.podFailureDomainKeys) && self.podFailureDomainKeys.size() > 0 && has(self.nodeFailureDomainKeys) && self.nodeFailureDomainKeys.size() > 0)': (self) =>
    !((self.podFailureDomainKeys ?? []).length > 0 && (self.nodeFailureDomainKeys ?? []).length > 0),
  'self > 0': (self) => typeof self === 'number' && self > 0,
  '!(has(self.image) && has(self.imageCatalogRef))': (self) => !(self.image !== undefined && self.imageCatalogRef !== undefined),
  'self == oldSelf': { transition: 'compares with the object before an update: none on creation, and the manifests never change this field' }
}
const celText = (rule: CelRule): string => rule.rule.replace(/\s+/g, ' ').trim()

describe('deploy/kubernetes/components/cloudnative-pg', { skip }, () => {
  const objects = (): KubernetesObject[] => renderWith('postgres', ['cloudnative-pg'])

  it('runs a Cluster with a synchronous standby, and PgBouncer in transaction mode in front of its primary', () => {
    const cluster = only(objects(), 'Cluster') as unknown as { metadata: { name: string }, spec: { instances: number, postgresql: { synchronous: { method: string, number: number, dataDurability?: string } } } }
    const pooler = only(objects(), 'Pooler') as unknown as { metadata: { name: string }, spec: { cluster: { name: string }, type: string, instances: number, pgbouncer: { poolMode: string } } }
    const { synchronous } = cluster.spec.postgresql
    assert.ok(synchronous.number >= 1 && cluster.spec.instances > synchronous.number, 'a synchronous standby, and an instance more to fail over to')
    assert.equal(synchronous.dataDurability, 'required', 'no commit acknowledged without a standby')
    assert.equal(pooler.spec.cluster.name, cluster.metadata.name)
    assert.equal(pooler.spec.type, 'rw', 'the primary')
    assert.equal(pooler.spec.pgbouncer.poolMode, 'transaction')
    assert.ok(pooler.spec.instances >= 2, 'a Pooler of more than one pod')
    assert.notEqual(pooler.metadata.name, cluster.metadata.name, 'CloudNativePG refuses a Pooler named as a Cluster')
  })

  it('has the pods reach the Pooler with the operator\'s application credentials, as libpq\'s variables', () => {
    const rendered = objects()
    const cluster = only(rendered, 'Cluster')
    const pooler = only(rendered, 'Pooler')
    const deployment = deploymentOf(rendered)
    for (const container of [containerOf(deployment, 'migrate'), containerOf(deployment)]) {
      assert.deepEqual(envOf(container, 'DATABASE_URL'), { name: 'DATABASE_URL', value: 'postgres://' }, `${container.name}: the rest from libpq's variables`)
      assert.equal(envOf(container, 'PGHOST')?.value, pooler.metadata.name, `${container.name}: the Pooler's Service`)
      assert.equal(envOf(container, 'PGPORT')?.value, '5432')
      for (const [variable, key] of [['PGUSER', 'username'], ['PGPASSWORD', 'password'], ['PGDATABASE', 'dbname']]) {
        assert.deepEqual(envOf(container, variable!)?.valueFrom, { secretKeyRef: { name: `${cluster.metadata.name}-app`, key } }, `${container.name}: ${variable!}`)
      }
      assert.equal(serviceConfig(container).databaseUrl, 'postgres://')
    }
    assert.deepEqual(rendered.filter((object) => object.kind === 'Secret'), [], 'the operator makes the Secret')
  })

  it('passes the CRDs\' CEL rules, each held by an assertion of its own or an answer why it cannot apply', () => {
    for (const object of objects().filter((candidate) => crdOf(candidate) !== undefined)) {
      const crd = crdOf(object)!
      for (const rule of crd.celRules) {
        const check = CEL_CHECKS[celText(rule)]
        assert.ok(check !== undefined, `${crd.kind} ${rule.path.join('.')}: a CEL rule the test does not know: ${celText(rule)}`)
        if (typeof check !== 'function') continue
        for (const value of valuesAt(object, rule.path)) assert.ok(check(value), `${crd.kind} ${rule.path.join('.')}: ${rule.message}`)
      }
    }
    assert.equal((CEL_CHECKS['self > 0'] as (self: unknown) => boolean)(0), false, 'a check refuses what its rule refuses')
  })
})

describe('deploy/kubernetes/components/egress', { skip }, () => {
  for (const overlay of OVERLAYS) {
    it(`lets overlays/${overlay}'s pods reach DNS, PostgreSQL or PgBouncer, Redis and OTLP, and nothing else`, () => {
      const objects = renderWith(overlay, ['egress', 'cloudnative-pg'])
      const policy = all<INetworkPolicy>(objects, 'NetworkPolicy').find((candidate) => (candidate.spec?.policyTypes ?? []).includes('Egress'))
      assert.ok(policy !== undefined)
      assert.deepEqual(policy.spec!.policyTypes, ['Egress'])
      assert.ok(includes(deploymentOf(objects).spec!.template.metadata?.labels, policy.spec!.podSelector.matchLabels), 'the policy selects the pods')
      const rules = policy.spec!.egress ?? []
      const to = (protocol: string, port: number): unknown[] => rules.filter((rule) => (rule.ports ?? []).some((candidate) => (candidate.protocol ?? 'TCP') === protocol && candidate.port === port)).flatMap((rule): unknown[] => rule.to ?? ['anywhere'])
      for (const protocol of ['UDP', 'TCP']) {
        assert.deepEqual(to(protocol, 53), [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } },
          { ipBlock: { cidr: '169.254.20.10/32' } }
        ], `DNS over ${protocol}: kube-dns, and NodeLocal DNSCache's address`)
      }
      for (const port of [5432, 6432]) {
        assert.deepEqual(to('TCP', port), [{ podSelector: {} }, { ipBlock: { cidr: '192.0.2.10/32' } }], `${port}: the namespace's pods, and a managed database's address`)
      }
      assert.deepEqual(to('TCP', 6379), [{ podSelector: {} }], 'Redis in the namespace')
      assert.deepEqual(to('TCP', 4318), [{ namespaceSelector: {} }], 'OTLP/HTTP to a collector in any namespace')
      assert.deepEqual(rules.flatMap((rule) => rule.ports ?? []).map((port) => Number(port.port)).sort((a, b) => a - b), [53, 53, 4318, 5432, 5432, 6379, 6432, 6432], 'no other port')
      const pgPort = Number(envOf(containerOf(deploymentOf(objects)), 'PGPORT')?.value)
      assert.ok(to('TCP', pgPort).length > 0, 'CloudNativePG\'s Pooler port is open')
    })
  }
})

describe('deploy/kubernetes: two installs in one namespace keep to their own pods', { skip }, () => {
  const components: Component[] = ['service-monitor', 'http-route', 'cloudnative-pg', 'egress']
  const install = (name: string): Record<string, unknown> => ({
    resources: ['{{deploy}}/overlays/postgres'],
    components: components.map((component) => `{{deploy}}/components/${component}`),
    namePrefix: `${name}-`,
    labels: [{ pairs: { 'app.kubernetes.io/instance': `${name}-petstore` }, includeSelectors: true }],
    configMapGenerator: [publicSettings({ ...PUBLIC_SETTINGS, PUBLIC_BASE_URL: `https://${name}.example.com/v1` })],
    secretGenerator: [{ name: 'petstore', literals: [`REDIS_URL=redis://${name}-redis:6379`] }]
  })
  const layouts: Record<string, Record<string, Record<string, unknown>>> = {
    'each install one overlay with its components': { '.': { resources: ['staging', 'production'] }, staging: install('staging'), production: install('production') },
    // A team's own base with the components, then an overlay per install with its prefix and name,
    // and the route beside the petstore-public it reads.
    'the components in a base of yours, the prefix, the name and the route in each install\'s overlay': {
      '.': { resources: ['staging', 'production'] },
      base: { resources: ['{{deploy}}/overlays/postgres'], components: components.filter((component) => component !== 'http-route').map((component) => `{{deploy}}/components/${component}`) },
      ...Object.fromEntries(['staging', 'production'].map((name) => [name, {
        resources: ['../base'],
        components: ['{{deploy}}/components/http-route'],
        namePrefix: `${name}-`,
        labels: [{ pairs: { 'app.kubernetes.io/instance': `${name}-petstore` }, includeSelectors: true }],
        configMapGenerator: [publicSettings({ ...PUBLIC_SETTINGS, PUBLIC_BASE_URL: `https://${name}.example.com/v1` })],
        secretGenerator: [{ name: 'petstore', literals: [`REDIS_URL=redis://${name}-redis:6379`] }]
      }]))
    }
  }

  for (const [layout, files] of Object.entries(layouts)) {
    it(`selects and names nothing of the other install: ${layout}`, () => {
      const objects = renderTree(files)
      const ofInstall = (name: string): KubernetesObject[] => objects.filter((object) => object.metadata.labels?.['app.kubernetes.io/instance'] === `${name}-petstore`)
      assert.equal(ofInstall('staging').length + ofInstall('production').length, objects.length, 'every object is one install\'s')
      for (const [name, other] of [['staging', 'production'], ['production', 'staging']] as const) {
        const own = ofInstall(name)
        const pods = deploymentOf(own).spec!.template.metadata!.labels
        const otherPods = deploymentOf(ofInstall(other)).spec!.template.metadata!.labels
        const service = only(own, 'Service')
        for (const selector of own.flatMap(selectorsOf)) {
          const [mine, theirs] = selector.selects === 'pods' ? [pods, otherPods] : [service.metadata.labels, only(ofInstall(other), 'Service').metadata.labels]
          assert.ok(includes(mine, selector.matchLabels), `${selector.where} selects its own`)
          assert.ok(!includes(theirs, selector.matchLabels), `${selector.where} selects ${other}'s too`)
        }
        // Every name an object gives of another: the one of its own install.
        const names = new Set(own.map((object) => `${object.kind}/${object.metadata.name}`))
        const cluster = only(own, 'Cluster').metadata.name
        const deployment = deploymentOf(own)
        const references: Array<[string, string]> = [
          ['Deployment', (only(own, 'HorizontalPodAutoscaler').spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name],
          ...((only(own, 'HTTPRoute') as unknown as IHTTPRoute).spec.rules ?? []).flatMap((rule) => (rule.backendRefs ?? []).map((ref) => ['Service', ref.name] as [string, string])),
          ['Cluster', (only(own, 'Pooler').spec as { cluster: { name: string } }).cluster.name],
          ['Pooler', envOf(containerOf(deployment), 'PGHOST')!.value!],
          ['Pooler', envOf(containerOf(deployment, 'migrate'), 'PGHOST')!.value!]
        ]
        for (const [kind, referred] of references) assert.ok(names.has(`${kind}/${referred}`), `${name}: ${kind} ${referred} is not its own`)
        const secrets = [containerOf(deployment), containerOf(deployment, 'migrate')].flatMap((container) => container.env ?? []).flatMap((variable) => variable.valueFrom?.secretKeyRef?.name ?? [])
        const generated = only(own, 'Secret').metadata.name
        assert.match(generated, new RegExp(`^${name}-petstore-`), 'the install\'s Secret petstore, renamed and hashed by kustomize')
        assert.deepEqual([...new Set(secrets)].sort(), [`${cluster}-app`, generated].sort(), `${name}: the operator's Secret of its own Cluster, and its own Secret petstore`)
        assert.equal(serviceConfig(containerOf(deployment)).publicBaseUrl, `https://${name}.example.com/v1`)
        assert.deepEqual((only(own, 'HTTPRoute') as unknown as IHTTPRoute).spec.hostnames, [`${name}.example.com`])
      }
    })
  }

  it('documents the Deployment\'s selector migration: a selector cannot change in place', () => {
    assert.match(DEPLOYMENT_DOCS, /--cascade=orphan/, 'the steps keep the pods while the Deployment is replaced')
  })
})

describe('deploy/kubernetes: every Component named in docs/deployment.md with the one line that adds it', { skip }, () => {
  it('lists each Component folder, and no other', () => {
    const folders = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'deploy/kubernetes/components'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n').filter(Boolean).map((file) => file.split('/')[3]!)
    for (const folder of new Set(folders)) {
      assert.match(DEPLOYMENT_DOCS, new RegExp(`components/${folder}\\b`), `docs/deployment.md names components/${folder}`)
      const kustomization = parseAllDocuments(readFileSync(join(KUBERNETES_DIR, 'components', folder, 'kustomization.yaml'), 'utf8'))[0]!.toJS() as { kind: string }
      assert.equal(kustomization.kind, 'Component', folder)
    }
  })
})
