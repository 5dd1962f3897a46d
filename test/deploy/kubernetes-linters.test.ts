/**
 * The default checks of kube-linter, kube-score and Polaris (test/fixtures/kubernetes-linters.yaml,
 * each at a pinned commit) held on the rendered objects: for every check that applies to a kind
 * deploy/kubernetes renders, an assertion of what it asks, or an exception whose reason
 * docs/deployment.md gives. The tools themselves do not run here (Go binaries no registry here
 * serves): each assertion is the check's rule as its source states it.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import type { IContainer } from 'kubernetes-models/v1/Container'
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec'
import { ROOT } from '../support/constants.js'
import { skippedFile } from '../support/helper.js'
import { deploymentOf, kubectlMissing, OVERLAYS, renderWith, type Component, type KubernetesObject, type Overlay } from '../support/kubernetes.js'

const skip = kubectlMissing()
if (skip !== false) skippedFile(`Kubernetes linter checks skipped: ${skip}`)

type Tool = 'kube-linter' | 'kube-score' | 'polaris'
interface Check { id: string, kinds: string[], severity?: string, source: string }
const FIXTURE = parse(readFileSync(join(ROOT, 'test/fixtures/kubernetes-linters.yaml'), 'utf8')) as Record<Tool, { repository: string, commit: string, checks: Check[] }>
const DEPLOYMENT_DOCS = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8')

/** The workload kinds the tools' pod-level targets stand for (DeploymentLike, Pod, Controller, Container…). */
const WORKLOADS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job', 'CronJob', 'Pod', 'DeploymentConfig']
/** A tool's name for what a check targets, as the Kubernetes kinds it covers ('*' for every kind). */
const TARGETS: Record<string, string[]> = {
  DeploymentLike: WORKLOADS,
  JobLike: ['Job', 'CronJob'],
  Any: ['*'],
  Meta: ['*'],
  Pod: WORKLOADS,
  PodSpec: WORKLOADS,
  PodTemplate: WORKLOADS,
  Container: WORKLOADS,
  Controller: WORKLOADS
}
const kindsOf = (target: string): string[] => TARGETS[target] ?? [target.split('/').pop()!]

/** What each overlay renders, alone and with every Component that fits it. */
function renderings (overlay: Overlay): Array<{ label: string, objects: KubernetesObject[], components: readonly Component[] }> {
  const components: Component[] = ['service-monitor', 'prometheus-rule', 'http-route', 'ingress', 'egress', ...(overlay === 'postgres' ? ['cloudnative-pg' as const] : ['sqlite-readwriteonce' as const])]
  return [
    { label: `overlays/${overlay}`, objects: renderWith(overlay, []), components: [] },
    { label: `overlays/${overlay} with ${components.join(', ')}`, objects: renderWith(overlay, components), components }
  ]
}

interface Rendering { overlay: Overlay, objects: KubernetesObject[], components: readonly Component[] }
const podOf = (rendering: Rendering): IPodSpec => deploymentOf(rendering.objects).spec!.template.spec!
const containersOf = (rendering: Rendering): IContainer[] => [...podOf(rendering).initContainers ?? [], ...podOf(rendering).containers]
const ofKind = (rendering: Rendering, kind: string): any[] => rendering.objects.filter((object) => object.kind === kind)
const matches = (labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean =>
  Object.keys(selector ?? {}).length > 0 && Object.entries(selector!).every(([key, value]) => labels?.[key] === value)
const podLabels = (rendering: Rendering): Record<string, string> => deploymentOf(rendering.objects).spec!.template.metadata!.labels!
const context = (rendering: Rendering, container: IContainer): Record<string, any> => ({ ...podOf(rendering).securityContext, ...container.securityContext })
/** An IANA service name, as a named port must be: at most 15 lower-case letters, digits and inner dashes, a letter among them. */
const IANA_SVC_NAME = /^(?=.*[a-z])[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

/**
 * One entry per applicable check: `check` asserts its rule on a rendering; `exception` says why the
 * manifests do otherwise, for the renderings `except` names (all when no check is given).
 */
interface Rule {
  check?: (rendering: Rendering) => void
  exception?: string
  /** The renderings the exception covers, when the check holds elsewhere. */
  except?: (rendering: Rendering) => boolean
}

const NO_CPU_LIMIT = 'No CPU limit: a limit runs a pod in bursts of a 100 ms period and starves it under a spike; the request reserves the core and WORKERS is held to it.'
const PULL_POLICY = 'IfNotPresent: the image is named by its version tag, never rebuilt under it, so a node that has it starts the pod without the registry; Always would make every start depend on the registry.'
const SINGLE_POD = 'overlays/sqlite runs one pod on its file, replaced with Recreate: never two pods on one SQLite file.'
const sqlite = (rendering: Rendering): boolean => rendering.overlay === 'sqlite'

const RULES: Record<`${Tool}/${string}`, Rule> = {
  // kube-linter
  'kube-linter/dangling-service': { check: (r) => { for (const service of ofKind(r, 'Service')) assert.ok(matches(podLabels(r), service.spec.selector), service.metadata.name) } },
  'kube-linter/deprecated-service-account-field': { check: (r) => assert.equal((podOf(r) as unknown as Record<string, unknown>).serviceAccount, undefined) },
  'kube-linter/docker-sock': { check: (r) => assert.deepEqual((podOf(r).volumes ?? []).filter((volume) => volume.hostPath !== undefined), []) },
  'kube-linter/drop-net-raw-capability': { check: (r) => { for (const c of containersOf(r)) assert.ok((c.securityContext?.capabilities?.drop ?? []).some((cap) => cap === 'ALL' || cap === 'NET_RAW'), c.name) } },
  'kube-linter/duplicate-env-var': { check: (r) => { for (const c of containersOf(r)) { const names = (c.env ?? []).map((v) => v.name); assert.equal(new Set(names).size, names.length, c.name) } } },
  'kube-linter/env-var-secret': { check: (r) => { for (const c of containersOf(r)) assert.deepEqual((c.env ?? []).filter((v) => /secret/i.test(v.name) && (v.value ?? '') !== ''), [], c.name) } },
  'kube-linter/host-ipc': { check: (r) => assert.notEqual(podOf(r).hostIPC, true) },
  'kube-linter/host-network': { check: (r) => assert.notEqual(podOf(r).hostNetwork, true) },
  'kube-linter/host-pid': { check: (r) => assert.notEqual(podOf(r).hostPID, true) },
  'kube-linter/invalid-target-ports': {
    check: (r) => {
      for (const c of containersOf(r)) for (const port of c.ports ?? []) if (port.name !== undefined) assert.match(port.name, IANA_SVC_NAME, `${c.name} ${port.name}`)
      for (const service of ofKind(r, 'Service')) for (const port of service.spec.ports) if (typeof port.targetPort === 'string') assert.match(port.targetPort, IANA_SVC_NAME)
    }
  },
  'kube-linter/latest-tag': { check: (r) => { for (const c of containersOf(r)) assert.match(c.image ?? '', /^[^:]+(\/[^:]+)*:(?!latest$)[^:/]+$/, c.name) } },
  'kube-linter/liveness-port': { check: (r) => { for (const c of podOf(r).containers) assert.ok(probePortExists(c, c.livenessProbe), c.name) } },
  'kube-linter/readiness-port': { check: (r) => { for (const c of podOf(r).containers) assert.ok(probePortExists(c, c.readinessProbe), c.name) } },
  'kube-linter/startup-port': { check: (r) => { for (const c of podOf(r).containers) assert.ok(probePortExists(c, c.startupProbe), c.name) } },
  'kube-linter/mismatching-selector': { check: (r) => assert.ok(matches(podLabels(r), deploymentOf(r.objects).spec!.selector.matchLabels)) },
  // Its rule: a workload of 2 replicas or more names a podAntiAffinity. The Deployment names none (the
  // autoscaler's count, 1 to the linter): the pods spread by topologySpreadConstraints instead.
  'kube-linter/no-anti-affinity': { check: (r) => assert.ok((deploymentOf(r.objects).spec!.replicas ?? 1) < 2 || podOf(r).affinity?.podAntiAffinity !== undefined) },
  'kube-linter/no-extensions-v1beta': { check: (r) => assert.deepEqual(r.objects.filter((o) => /^extensions\/v1beta/.test(o.apiVersion)), []) },
  'kube-linter/no-read-only-root-fs': { check: (r) => { for (const c of containersOf(r)) assert.equal(c.securityContext?.readOnlyRootFilesystem, true, c.name) } },
  'kube-linter/non-existent-service-account': { check: (r) => assert.equal(podOf(r).serviceAccountName, undefined, 'the namespace\'s default account, with no token mounted') },
  'kube-linter/pdb-max-unavailable': { check: (r) => { for (const pdb of ofKind(r, 'PodDisruptionBudget')) assert.ok(![0, '0%'].includes(pdb.spec.maxUnavailable)) } },
  'kube-linter/pdb-min-available': { check: (r) => { for (const pdb of ofKind(r, 'PodDisruptionBudget')) assert.equal(pdb.spec.minAvailable, undefined) } },
  'kube-linter/pdb-unhealthy-pod-eviction-policy': { check: (r) => { for (const pdb of ofKind(r, 'PodDisruptionBudget')) assert.equal(pdb.spec.unhealthyPodEvictionPolicy, 'AlwaysAllow') } },
  'kube-linter/privilege-escalation-container': { check: (r) => { for (const c of containersOf(r)) assert.equal(c.securityContext?.allowPrivilegeEscalation, false, c.name) } },
  'kube-linter/privileged-container': { check: (r) => { for (const c of containersOf(r)) assert.notEqual(c.securityContext?.privileged, true, c.name) } },
  'kube-linter/run-as-non-root': { check: (r) => { for (const c of containersOf(r)) assert.ok(context(r, c).runAsNonRoot === true && context(r, c).runAsUser > 0, c.name) } },
  'kube-linter/sensitive-host-mounts': { check: (r) => assert.deepEqual((podOf(r).volumes ?? []).filter((volume) => volume.hostPath !== undefined), []) },
  'kube-linter/ssh-port': { check: (r) => { for (const c of containersOf(r)) assert.ok(!(c.ports ?? []).some((port) => port.containerPort === 22), c.name) } },
  'kube-linter/unsafe-sysctls': { check: (r) => assert.deepEqual(podOf(r).securityContext?.sysctls ?? [], []) },
  'kube-linter/unset-cpu-requirements': { check: (r) => { for (const c of containersOf(r)) assert.ok(c.resources?.requests?.cpu !== undefined, c.name) } },
  'kube-linter/unset-memory-requirements': { check: (r) => { for (const c of containersOf(r)) assert.ok(c.resources?.limits?.memory !== undefined, c.name) } },

  // kube-score
  'kube-score/container-ephemeral-storage-request-and-limit': { check: (r) => { for (const c of containersOf(r)) assert.ok(c.resources?.requests?.['ephemeral-storage'] !== undefined && c.resources?.limits?.['ephemeral-storage'] !== undefined, c.name) } },
  'kube-score/container-image-pull-policy': { exception: PULL_POLICY },
  'kube-score/container-image-tag': { check: (r) => { for (const c of containersOf(r)) assert.match(c.image ?? '', /:(?!latest$)[^:/]+$/, c.name) } },
  'kube-score/container-resources': { exception: NO_CPU_LIMIT },
  'kube-score/container-security-context-privileged': { check: (r) => { for (const c of containersOf(r)) assert.notEqual(c.securityContext?.privileged, true, c.name) } },
  'kube-score/container-security-context-readonlyrootfilesystem': { check: (r) => { for (const c of containersOf(r)) assert.equal(c.securityContext?.readOnlyRootFilesystem, true, c.name) } },
  'kube-score/container-security-context-user-group-id': { check: (r) => { for (const c of containersOf(r)) assert.ok(context(r, c).runAsUser > 10000 && context(r, c).runAsGroup > 10000, c.name) } },
  'kube-score/deployment-has-host-podantiaffinity': { exception: 'The pods spread over nodes and zones by topologySpreadConstraints (ScheduleAnyway), not podAntiAffinity: a required anti-affinity leaves pods past the node count unscheduled, a preferred one spreads over nodes only.' },
  'kube-score/deployment-has-poddisruptionbudget': { check: (r) => assert.ok(ofKind(r, 'PodDisruptionBudget').some((pdb) => matches(podLabels(r), pdb.spec.selector.matchLabels))), exception: `${SINGLE_POD} A budget would block every drain or allow the one pod's eviction: none is given.`, except: sqlite },
  'kube-score/deployment-pod-selector-labels-match-template-metadata-labels': { check: (r) => assert.ok(matches(podLabels(r), deploymentOf(r.objects).spec!.selector.matchLabels)) },
  'kube-score/deployment-replicas': { check: (r) => assert.ok(ofKind(r, 'HorizontalPodAutoscaler').some((hpa) => hpa.spec.minReplicas >= 2), 'the autoscaler\'s at least 2'), exception: SINGLE_POD, except: sqlite },
  'kube-score/deployment-strategy': { check: (r) => assert.equal(deploymentOf(r.objects).spec!.strategy?.type, 'RollingUpdate'), exception: SINGLE_POD, except: sqlite },
  'kube-score/deployment-targeted-by-hpa-does-not-have-replicas-configured': { check: (r) => assert.ok(ofKind(r, 'HorizontalPodAutoscaler').length === 0 || deploymentOf(r.objects).spec!.replicas === undefined) },
  'kube-score/environment-variable-key-duplication': { check: (r) => { for (const c of containersOf(r)) { const names = (c.env ?? []).map((v) => v.name); assert.equal(new Set(names).size, names.length, c.name) } } },
  'kube-score/horizontalpodautoscaler-has-target': { check: (r) => { for (const hpa of ofKind(r, 'HorizontalPodAutoscaler')) assert.ok(r.objects.some((o) => o.kind === hpa.spec.scaleTargetRef.kind && o.metadata.name === hpa.spec.scaleTargetRef.name)) } },
  'kube-score/horizontalpodautoscaler-replicas': { check: (r) => { for (const hpa of ofKind(r, 'HorizontalPodAutoscaler')) assert.ok(hpa.spec.minReplicas >= 2) } },
  'kube-score/ingress-targets-service': { check: (r) => { for (const ingress of ofKind(r, 'Ingress')) for (const rule of ingress.spec.rules) for (const path of rule.http.paths) assert.ok(ofKind(r, 'Service').some((s) => s.metadata.name === path.backend.service.name)) } },
  'kube-score/label-values': { check: (r) => { for (const o of r.objects) for (const [key, value] of Object.entries(o.metadata.labels ?? {})) assert.match(value, LABEL_VALUE, `${o.kind} ${key}`) } },
  'kube-score/networkpolicy-targets-pod': { check: (r) => { for (const policy of ofKind(r, 'NetworkPolicy')) assert.ok(matches(podLabels(r), policy.spec.podSelector.matchLabels), policy.metadata.name) } },
  'kube-score/pod-networkpolicy': {
    check: (r) => { for (const type of ['Ingress', 'Egress']) assert.ok(ofKind(r, 'NetworkPolicy').some((p) => p.spec.policyTypes.includes(type) && matches(podLabels(r), p.spec.podSelector.matchLabels)), type) },
    exception: 'Egress is restricted by components/egress, for namespaces that deny it by default; without it the pods reach their database, Redis and collector as the cluster allows.',
    except: (r) => !r.components.includes('egress')
  },
  'kube-score/pod-probes': { check: (r) => { const [c] = podOf(r).containers; assert.ok(c!.readinessProbe !== undefined && c!.livenessProbe !== undefined) } },
  'kube-score/pod-probes-identical': { check: (r) => { for (const c of podOf(r).containers) assert.notEqual(c.readinessProbe?.httpGet?.path, c.livenessProbe?.httpGet?.path, c.name) } },
  'kube-score/pod-topology-spread-constraints': {
    check: (r) => {
      for (const constraint of podOf(r).topologySpreadConstraints ?? []) {
        assert.ok(constraint.labelSelector !== undefined && constraint.maxSkew > 0 && constraint.topologyKey !== '' && ['DoNotSchedule', 'ScheduleAnyway'].includes(constraint.whenUnsatisfiable))
      }
    }
  },
  'kube-score/poddisruptionbudget-has-policy': { check: (r) => { for (const pdb of ofKind(r, 'PodDisruptionBudget')) assert.ok(pdb.spec.minAvailable !== undefined || pdb.spec.maxUnavailable !== undefined) } },
  'kube-score/service-targets-pod': { check: (r) => { for (const service of ofKind(r, 'Service')) assert.ok(matches(podLabels(r), service.spec.selector)) } },
  'kube-score/service-type': { check: (r) => { for (const service of ofKind(r, 'Service')) assert.notEqual(service.spec.type, 'NodePort') } },
  'kube-score/stable-version': { check: (r) => assert.deepEqual(r.objects.filter((o) => /^(extensions|apps|batch|policy|networking\.k8s\.io)\/v1beta|^autoscaling\/v2beta/.test(o.apiVersion)), []) },

  // Polaris
  'polaris/automountServiceAccountToken': { check: (r) => assert.equal(podOf(r).automountServiceAccountToken, false) },
  'polaris/cpuLimitsMissing': { exception: NO_CPU_LIMIT },
  'polaris/cpuRequestsMissing': { check: (r) => { for (const c of podOf(r).containers) assert.ok(c.resources?.requests?.cpu !== undefined, c.name) } },
  'polaris/dangerousCapabilities': { check: (r) => { for (const c of containersOf(r)) assert.deepEqual(c.securityContext?.capabilities?.add ?? [], [], c.name) } },
  'polaris/deploymentMissingReplicas': { exception: `overlays/postgres has no replicas: the HorizontalPodAutoscaler owns the count (2 at least), which a replicas field would reset at every apply. ${SINGLE_POD}` },
  'polaris/hostIPCSet': { check: (r) => assert.notEqual(podOf(r).hostIPC, true) },
  'polaris/hostNetworkSet': { check: (r) => assert.notEqual(podOf(r).hostNetwork, true) },
  'polaris/hostPIDSet': { check: (r) => assert.notEqual(podOf(r).hostPID, true) },
  'polaris/hostPathSet': { check: (r) => assert.deepEqual((podOf(r).volumes ?? []).filter((volume) => volume.hostPath !== undefined), []) },
  'polaris/hostPortSet': { check: (r) => { for (const c of containersOf(r)) assert.ok(!(c.ports ?? []).some((port) => port.hostPort !== undefined), c.name) } },
  'polaris/hostProcess': { check: (r) => assert.notEqual(podOf(r).securityContext?.windowsOptions?.hostProcess, true) },
  'polaris/hpaMaxAvailability': { check: (r) => { for (const hpa of ofKind(r, 'HorizontalPodAutoscaler')) assert.ok(hpa.spec.maxReplicas > hpa.spec.minReplicas) } },
  'polaris/hpaMinAvailability': { check: (r) => { for (const hpa of ofKind(r, 'HorizontalPodAutoscaler')) assert.ok(hpa.spec.minReplicas >= 2) } },
  'polaris/insecureCapabilities': { check: (r) => { for (const c of containersOf(r)) assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL'], c.name) } },
  'polaris/linuxHardening': { check: (r) => { for (const c of containersOf(r)) assert.equal(context(r, c).seccompProfile?.type, 'RuntimeDefault', c.name) } },
  'polaris/livenessProbeMissing': { check: (r) => { for (const c of podOf(r).containers) assert.ok(c.livenessProbe !== undefined, c.name) } },
  'polaris/memoryLimitsMissing': { check: (r) => { for (const c of podOf(r).containers) assert.ok(c.resources?.limits?.memory !== undefined, c.name) } },
  'polaris/memoryRequestsMissing': { check: (r) => { for (const c of podOf(r).containers) assert.ok(c.resources?.requests?.memory !== undefined, c.name) } },
  'polaris/metadataAndInstanceMismatched': { check: (r) => { const d = deploymentOf(r.objects); assert.equal(d.metadata!.labels?.['app.kubernetes.io/instance'], d.metadata!.name) } },
  'polaris/missingNetworkPolicy': { exception: 'Polaris asks for one NetworkPolicy with both ingress and egress rules that selects the pods by exactly one of their labels. The pods are selected by name and install together, so that two installs never share a policy, and egress is a Component of its own (components/egress).' },
  'polaris/missingPodDisruptionBudget': { check: (r) => assert.ok(ofKind(r, 'PodDisruptionBudget').some((pdb) => matches(podLabels(r), pdb.spec.selector.matchLabels))), exception: `${SINGLE_POD} A budget would block every drain or allow the one pod's eviction: none is given.`, except: sqlite },
  'polaris/notReadOnlyRootFilesystem': { check: (r) => { for (const c of containersOf(r)) assert.equal(c.securityContext?.readOnlyRootFilesystem, true, c.name) } },
  'polaris/pdbDisruptionsIsZero': { check: (r) => { for (const pdb of ofKind(r, 'PodDisruptionBudget')) assert.ok(![0, '0%'].includes(pdb.spec.maxUnavailable) && pdb.spec.minAvailable !== '100%') } },
  'polaris/pdbMinAvailableGreaterThanHPAMinReplicas': { check: (r) => { for (const pdb of ofKind(r, 'PodDisruptionBudget')) assert.equal(pdb.spec.minAvailable, undefined) } },
  'polaris/priorityClassNotSet': { exception: 'Priority classes are a cluster\'s own, named by its platform team: the manifests cannot know one; set yours with a patch (priorityClassName).' },
  'polaris/privilegeEscalationAllowed': { check: (r) => { for (const c of containersOf(r)) assert.equal(c.securityContext?.allowPrivilegeEscalation, false, c.name) } },
  'polaris/procMount': { check: (r) => { for (const c of containersOf(r)) assert.equal(c.securityContext?.procMount, undefined, c.name) } },
  'polaris/pullPolicyNotAlways': { exception: PULL_POLICY },
  'polaris/readinessProbeMissing': { check: (r) => { for (const c of podOf(r).containers) assert.ok(c.readinessProbe !== undefined, c.name) } },
  'polaris/runAsPrivileged': { check: (r) => { for (const c of containersOf(r)) assert.notEqual(c.securityContext?.privileged, true, c.name) } },
  'polaris/runAsRootAllowed': { check: (r) => { for (const c of containersOf(r)) assert.equal(context(r, c).runAsNonRoot, true, c.name) } },
  'polaris/sensitiveContainerEnvVar': { check: (r) => { for (const c of containersOf(r)) assert.deepEqual((c.env ?? []).filter((v) => /password|token|bearer|secret/i.test(v.name) && v.value !== undefined), [], c.name) } },
  'polaris/tagNotSpecified': { check: (r) => { for (const c of containersOf(r)) assert.match(c.image ?? '', /:[^:/]+$/, c.name) } },
  'polaris/tlsSettingsMissing': { check: (r) => { for (const ingress of ofKind(r, 'Ingress')) assert.ok((ingress.spec.tls ?? []).length > 0) } },
  'polaris/topologySpreadConstraint': { check: (r) => assert.ok((podOf(r).topologySpreadConstraints ?? []).length > 0) }
}

function probePortExists (container: IContainer, probe: IContainer['livenessProbe']): boolean {
  const port = probe?.httpGet?.port
  return port !== undefined && (container.ports ?? []).some((candidate) => candidate.name === port || candidate.containerPort === port)
}

describe('deploy/kubernetes: the default checks of kube-linter, kube-score and Polaris', { skip }, () => {
  const rendered = OVERLAYS.flatMap((overlay) => renderings(overlay).map((rendering) => ({ ...rendering, overlay })))
  const kinds = new Set(rendered.flatMap((rendering) => rendering.objects.map((object) => object.kind)))
  const applicable = (Object.keys(FIXTURE) as Tool[]).flatMap((tool) => FIXTURE[tool].checks
    .filter((check) => check.kinds.flatMap(kindsOf).some((kind) => kind === '*' || kinds.has(kind)))
    .map((check) => `${tool}/${check.id}` as const))

  it('pins each linter at a commit, and holds an assertion or an exception for every default check that applies, and for no other', () => {
    for (const tool of Object.keys(FIXTURE) as Tool[]) assert.match(FIXTURE[tool].commit, /^[0-9a-f]{40}$/, tool)
    assert.deepEqual(Object.keys(RULES).sort(), [...applicable].sort())
    const counts = Object.fromEntries((Object.keys(FIXTURE) as Tool[]).map((tool) => [tool, applicable.filter((id) => id.startsWith(`${tool}/`)).length]))
    console.log(`applicable default checks: ${JSON.stringify(counts)} of ${JSON.stringify(Object.fromEntries(Object.entries(FIXTURE).map(([tool, { checks }]) => [tool, checks.length])))}`)
  })

  for (const id of applicable) {
    const rule = RULES[id]
    it(`${id}: ${rule?.check === undefined ? 'an exception' : rule.except === undefined ? 'holds' : 'holds, but where an exception says why'}`, () => {
      assert.ok(rule !== undefined, 'no entry')
      for (const rendering of rendered) {
        if (rule.check === undefined || rule.except?.(rendering) === true) continue
        rule.check(rendering)
      }
      if (rule.exception !== undefined) {
        const [tool, check] = id.split('/') as [Tool, string]
        const row = DEPLOYMENT_DOCS.split('\n').find((line) => line.startsWith('|') && line.includes(`\`${check}\``) && line.toLowerCase().includes(tool))
        assert.ok(row !== undefined, `docs/deployment.md lists ${id} among the linters' exceptions`)
      }
    })
  }

  it('would fail a check the manifests broke: a probe on a port the container lacks, a container without its CPU request', () => {
    const broken = structuredClone(rendered[0]!)
    const deployment = broken.objects.find((object) => object.kind === 'Deployment') as unknown as { spec: { template: { spec: IPodSpec } } }
    const [container] = deployment.spec.template.spec.containers
    container!.readinessProbe!.httpGet!.port = 'nowhere'
    delete container!.resources!.requests!.cpu
    assert.throws(() => RULES['kube-linter/readiness-port']!.check!(broken))
    assert.throws(() => RULES['kube-linter/unset-cpu-requirements']!.check!(broken))
  })
})
