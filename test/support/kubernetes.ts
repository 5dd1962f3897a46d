/**
 * The Kubernetes manifests of deploy/kubernetes as a cluster would receive them: rendered by the
 * machine's kubectl (its kustomize), as objects, with kubernetes-models' classes to validate them
 * against the API's own schemas and to read them typed. No API server runs here.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IContainer } from 'kubernetes-models/v1/Container'
import { ROOT } from './constants.js'

export const KUBERNETES_DIR = join(ROOT, 'deploy/kubernetes')
export const OVERLAYS = ['sqlite', 'postgres'] as const
export type Overlay = typeof OVERLAYS[number]
export const SERVICE_MONITOR_COMPONENT = join(KUBERNETES_DIR, 'components/service-monitor')
/** kustomize 5 (`labels`, Components) and ReadWriteOncePod, as kubectl 1.27 and later have them. */
const KUBECTL_MINOR_AT_LEAST = 27

/**
 * How long after a pod's deletion kube-proxy and the ingress stop sending it new connections: they
 * learn it from the API server while the kubelet sends SIGTERM, so a few seconds on a healthy
 * cluster (kubernetes.io, "Pod termination"). SHUTDOWN_DELAY must cover it; the rolling-update
 * test removes an instance from its balancer this long after SIGTERM.
 */
export const ENDPOINT_PROPAGATION_S = 3

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
