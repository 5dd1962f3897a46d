/**
 * Every kind deploy/kubernetes renders, checked against its API's own schema: kubernetes-models for
 * Kubernetes' own, @kubernetes-models/prometheus-operator and @kubernetes-models/gateway-api for
 * theirs, and CloudNativePG's CRDs (test/fixtures/crds) for its Cluster and Pooler.
 */
import { readCrd, type CrdVersion } from './crds.js'
import type { KubernetesObject } from './kubernetes.js'

type Model = new (data: unknown) => { validate: () => void }

/** The packages of models, by API group; the CRDs of the groups npm has no models for. */
const MODEL_PACKAGES: Record<string, string> = {
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
  'gateway.networking.k8s.io': '@kubernetes-models/gateway-api'
}
const CRDS: CrdVersion[] = [
  readCrd('cloudnative-pg/postgresql.cnpg.io_clusters.yaml', 'v1'),
  readCrd('cloudnative-pg/postgresql.cnpg.io_poolers.yaml', 'v1')
]

/** The CRD version of an object's apiVersion and kind, or undefined when npm models it. */
export function crdOf (object: KubernetesObject): CrdVersion | undefined {
  return CRDS.find((crd) => crd.apiVersion === object.apiVersion && crd.kind === object.kind)
}

/** The model class of the object's apiVersion and kind. */
async function modelOf (object: KubernetesObject): Promise<Model> {
  const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : ''
  const pkg = MODEL_PACKAGES[group] ?? 'kubernetes-models'
  const module = await import(`${pkg}/${object.apiVersion}/${object.kind}`) as Record<string, Model | undefined>
  const model = module[object.kind]
  if (model === undefined) throw new Error(`no model of ${object.apiVersion} ${object.kind}`)
  return model
}

/**
 * Why the API server would refuse `object`, as messages; empty when it would take it.
 * @example assert.deepEqual(await schemaErrors(object), [])
 */
export async function schemaErrors (object: KubernetesObject): Promise<string[]> {
  const crd = crdOf(object)
  if (crd !== undefined) return crd.validate(object)
  const Model = await modelOf(object)
  try {
    new Model(object).validate()
    return []
  } catch (err) {
    return [(err as Error).message]
  }
}
