/**
 * The Kubernetes manifests of deploy/kubernetes as a cluster would receive them: rendered by the
 * machine's kubectl (its kustomize), as objects, with kubernetes-models' classes to validate them
 * against the API's own schemas and to read them typed. No API server runs here.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { readFileSync } from 'node:fs'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IContainer } from 'kubernetes-models/v1/Container'
import { parseConfig, type Config } from '../../src/config.js'
import { ROOT } from './constants.js'

export const KUBERNETES_DIR = join(ROOT, 'deploy/kubernetes')
export const OVERLAYS = ['sqlite', 'postgres'] as const
export type Overlay = typeof OVERLAYS[number]
export const SERVICE_MONITOR_COMPONENT = join(KUBERNETES_DIR, 'components/service-monitor')

/** Every Component of deploy/kubernetes/components, by its folder's name. */
export const COMPONENTS = ['cloudnative-pg', 'egress', 'http-route', 'ingress', 'prometheus-labels', 'prometheus-rule', 'public-address', 'service-monitor', 'sqlite-readwriteonce'] as const
export type Component = typeof COMPONENTS[number]
export const componentDir = (component: Component): string => join(KUBERNETES_DIR, 'components', component)
/** The Components that read the ConfigMap petstore-public of the overlay beside them (components/public-address). */
export const PUBLIC_COMPONENTS: readonly Component[] = ['http-route', 'ingress', 'public-address']
/** The settings a team gives petstore-public in the tests: a narrow TRUST_PROXY, the proxies' two addresses. */
export const PUBLIC_SETTINGS = { PUBLIC_BASE_URL: 'https://api.example.com/v1', TRUST_PROXY: '10.0.3.7,10.0.3.8' }

/** The configMapGenerator entry of the ConfigMap petstore-public that a team's overlay writes. */
export function publicSettings (values: Record<string, string> = PUBLIC_SETTINGS): Record<string, unknown> {
  return { name: 'petstore-public', literals: Object.entries(values).map(([key, value]) => `${key}=${value}`) }
}

/**
 * An overlay with `components`, as a team's overlay of one line each adds them; with petstore-public
 * generated when one of them reads it, unless `kustomization` gives its own configMapGenerator.
 * @example renderWith('postgres', ['service-monitor'], { namePrefix: 'staging-' })
 */
export function renderWith (overlay: Overlay, components: readonly Component[], kustomization: Record<string, unknown> = {}): KubernetesObject[] {
  const needsPublic = components.some((component) => PUBLIC_COMPONENTS.includes(component))
  return renderOnTop([overlayDir(overlay)], {
    ...(needsPublic ? { configMapGenerator: [publicSettings()] } : {}),
    ...kustomization
  }, components.map(componentDir))
}

/**
 * Kustomizations written to a temporary tree (`files`: relative folder -> kustomization, `.` the
 * root; `{{deploy}}` in a resource or component path stands for deploy/kubernetes), rendered from its root.
 * @example renderTree({ '.': { resources: ['a', 'b'] }, a: { resources: ['{{deploy}}/overlays/sqlite'] }, b: { … } })
 */
export function renderTree (files: Record<string, Record<string, unknown>>): KubernetesObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-tree-'))
  try {
    for (const [folder, kustomization] of Object.entries(files)) {
      const at = join(dir, folder)
      mkdirSync(at, { recursive: true })
      const local = (paths: unknown): unknown => Array.isArray(paths)
        ? paths.map((path) => typeof path === 'string' ? path.replace('{{deploy}}', relative(at, KUBERNETES_DIR)) : path)
        : paths
      writeFileSync(join(at, 'kustomization.yaml'), stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        ...kustomization,
        ...('resources' in kustomization ? { resources: local(kustomization.resources) } : {}),
        ...('components' in kustomization ? { components: local(kustomization.components) } : {})
      }))
    }
    return renderKustomization(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A label selector an object holds, and where. */
export interface Selector { where: string, matchLabels: Record<string, string>, selects: 'pods' | 'services' }

/** Every label selector of `object`: what kustomize's labels must reach for an install to keep to its own. */
export function selectorsOf (object: KubernetesObject): Selector[] {
  const spec = (object.spec ?? {}) as Record<string, any>
  const selectors: Selector[] = []
  const add = (where: string, matchLabels: Record<string, string> | undefined, selects: Selector['selects'] = 'pods'): void => {
    selectors.push({ where: `${object.kind} ${object.metadata.name} ${where}`, matchLabels: matchLabels ?? {}, selects })
  }
  switch (object.kind) {
    case 'Deployment':
      add('spec.selector', spec.selector?.matchLabels)
      for (const [i, constraint] of (spec.template?.spec?.topologySpreadConstraints ?? []).entries()) add(`topologySpreadConstraints[${i}]`, constraint.labelSelector?.matchLabels)
      break
    case 'Service': add('spec.selector', spec.selector); break
    case 'PodDisruptionBudget': add('spec.selector', spec.selector?.matchLabels); break
    case 'NetworkPolicy': add('spec.podSelector', spec.podSelector?.matchLabels); break
    case 'ServiceMonitor': add('spec.selector', spec.selector?.matchLabels, 'services'); break
  }
  return selectors
}

/** kustomize 5 (`labels`, Components) and ReadWriteOncePod, as kubectl 1.27 and later have them. */
const KUBECTL_MINOR_AT_LEAST = 27

/**
 * How long after a pod's deletion kube-proxy and the ingress stop sending it new connections: they
 * learn it from the API server while the kubelet sends SIGTERM, so a few seconds on a healthy
 * cluster (kubernetes.io, "Pod termination"). SHUTDOWN_DELAY must cover it; the rolling-update
 * test removes an instance from its balancer this long after SIGTERM.
 */
export const ENDPOINT_PROPAGATION_S = 3

/** The Dockerfile's runtime stage: what follows the last FROM, continuation lines joined. */
const RUNTIME_STAGE = ((dockerfile) => dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')).replaceAll('\\\n', ' '))(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
/** The image's user (the Dockerfile's useradd --uid). */
export const IMAGE_UID = Number(/--uid (\d+)/.exec(RUNTIME_STAGE)?.[1])
/** The image's environment (the runtime stage's ENV lines). */
export const IMAGE_ENV: Record<string, string> = Object.fromEntries(RUNTIME_STAGE.split('\n').filter((line) => line.startsWith('ENV '))
  .flatMap((line) => line.slice(4).trim().split(/\s+/)).map((pair) => pair.split('=', 2) as [string, string]))
/** Values for the variables a pod takes from a Secret: the settings are parsed with these in their place. */
export const FROM_SECRET: Record<string, string> = { DATABASE_URL: 'postgres://petstore@database.invalid:5432/petstore', REDIS_URL: 'redis://redis.invalid:6379' }

/**
 * What `petstore serve` in this container runs on: the image's environment, then the container's
 * (a Secret's key as FROM_SECRET says, else a stand-in value).
 * @example assert.equal(serviceConfig(containerOf(deployment)).port, 8080)
 */
export function serviceConfig (container: IContainer): Config {
  const env: Record<string, string> = { ...IMAGE_ENV }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value
    else if (variable.valueFrom?.secretKeyRef !== undefined) env[variable.name] = FROM_SECRET[variable.name] ?? 'from-a-secret'
  }
  return parseConfig(env)
}

/** A rendered object: what every kind has; kubernetes-models' classes read the rest typed. */
export interface KubernetesObject {
  apiVersion: string
  kind: string
  metadata: { name: string, labels?: Record<string, string>, annotations?: Record<string, string> }
  [field: string]: unknown
}

/** Why kubectl cannot render here, or false when it can. */
export function kubectlMissing (): string | false {
  let version: { clientVersion?: { minor?: string }, kustomizeVersion?: string }
  try {
    version = JSON.parse(execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as typeof version
  } catch {
    return 'kubectl is missing (1.27 or later, with its kustomize)'
  }
  const minor = Number.parseInt(version.clientVersion?.minor ?? '', 10)
  if (!(minor >= KUBECTL_MINOR_AT_LEAST)) return `kubectl 1.${minor} is older than 1.${KUBECTL_MINOR_AT_LEAST}`
  return false
}

/** `kubectl kustomize DIR`, as objects. */
export function renderKustomization (dir: string): KubernetesObject[] {
  const text = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })
  return parseAllDocuments(text).map((document) => document.toJS() as KubernetesObject)
}

/** An overlay of deploy/kubernetes rendered as it is. */
export function renderOverlay (overlay: Overlay): KubernetesObject[] {
  return renderKustomization(join(KUBERNETES_DIR, 'overlays', overlay))
}

/**
 * `kustomization` (without its resources) over `resources` (folders), rendered from a temporary
 * folder, as a team's own overlay would be: kustomize takes only relative paths.
 * @example renderOnTop([overlayDir('sqlite')], { images: [{ name: 'registry.example.com/petstore', newTag: 'test' }] })
 */
export function renderOnTop (resources: string[], kustomization: Record<string, unknown> = {}, components: string[] = []): KubernetesObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-overlay-'))
  try {
    writeFileSync(join(dir, 'kustomization.yaml'), stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: resources.map((folder) => relative(dir, folder)),
      ...(components.length > 0 ? { components: components.map((folder) => relative(dir, folder)) } : {}),
      ...kustomization
    }))
    return renderKustomization(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const overlayDir = (overlay: Overlay): string => join(KUBERNETES_DIR, 'overlays', overlay)

/** The one object of `kind` among `objects`; throws when there is none or more than one. */
export function only (objects: KubernetesObject[], kind: string): KubernetesObject {
  const found = objects.filter((object) => object.kind === kind)
  if (found.length !== 1) throw new Error(`${found.length} objects of kind ${kind}, not one`)
  return found[0]!
}

/** The Deployment among `objects`, typed. */
export function deploymentOf (objects: KubernetesObject[]): Deployment {
  return new Deployment(only(objects, 'Deployment') as unknown as Deployment)
}

/** The container named `name` of the Deployment's pods (`petstore`, the service; `migrate`, the init container). */
export function containerOf (deployment: Deployment, name = 'petstore'): IContainer {
  const spec = deployment.spec?.template.spec
  const container = [...spec?.containers ?? [], ...spec?.initContainers ?? []].find((candidate) => candidate.name === name)
  if (container === undefined) throw new Error(`no container ${name}`)
  return container
}

/** A plain `value` of the container's environment, or undefined. */
export function envValue (container: IContainer, name: string): string | undefined {
  return container.env?.find((variable) => variable.name === name)?.value
}
