/** The workloads: their requests, and what the closed loop (autocannon.ts) reports of them. */
/** The bearer key every target accepts and every request carries. */
export const API_KEY = 'bench-key-0123456789abcdef'
export const WORKLOADS = ['list', 'list-status', 'get', 'create'] as const
export const SCALE_WORKLOADS = ['list', 'deep-list', 'get'] as const
export type Workload = typeof WORKLOADS[number] | typeof SCALE_WORKLOADS[number]

/** A workload's requests: `path`, or one drawn from `paths`, or `path` + a random id up to `idMax`. */
export interface LoadSpec {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  idMax?: number
  paths?: string[]
}

/** `good`: the 2xx answers; `refused`: the 503s; `failed`: every other status and socket errors. */
export interface LoadResult {
  requests: number, good: number, reqPerSec: number, p50Ms: number, p99Ms: number, refused: number, failed: number
}

/** The workload's requests for a database of animals 1..`animals`; `cursors` for the deep list. */
export function workloadSpec (workload: Workload, animals: number, cursors: string[] = []): LoadSpec {
  const headers = { authorization: `Bearer ${API_KEY}` }
  const json = { ...headers, 'content-type': 'application/json' }
  const path = '/v1/pets?limit=20'
  switch (workload) {
    case 'list': return { method: 'GET', path, headers }
    case 'list-status': return { method: 'GET', path: `${path}&status=available`, headers }
    case 'get': return { method: 'GET', path: '/v1/pets/', idMax: animals, headers }
    case 'deep-list': return { method: 'GET', path, headers, paths: cursors.map((c) => `${path}&cursor=${c}`) }
    case 'create': return { method: 'POST', path: '/v1/pets', headers: json, body: '{"name":"Rex","categoryId":3}' }
  }
}

/** A workload's request, for a report's titles: `GET /v1/pets/{id}` (bench/README.md says more of each). */
export function request (workload: Workload): string {
  const { method, path, idMax, paths } = workloadSpec(workload, 1, ['…'])
  return `\`${method} ${idMax === undefined ? paths?.[0] ?? path : `${path}{id}`}\``
}

/** The path of a workload's first request, and of one request the autocannon process draws. */
export function pickPath (spec: LoadSpec): string {
  if (spec.paths !== undefined) return spec.paths[Math.floor(Math.random() * spec.paths.length)]!
  return spec.idMax === undefined ? spec.path : `${spec.path}${1 + Math.floor(Math.random() * spec.idMax)}`
}
