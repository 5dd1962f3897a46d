/**
 * The four workloads of the benchmark, as each kind of target spells them: the
 * service and the ceiling share the API (`/v1/pets`, a bearer key); json-server
 * has its own query language (`/pets?_limit=20`) and no key.
 */
import type { LoadSpec } from './load.js'

export const WORKLOADS = ['list', 'list-status', 'get', 'create'] as const
export type Workload = typeof WORKLOADS[number]

/** Each workload's request, as the API spells it, for the report's headings. */
export const WORKLOAD_REQUESTS: Record<Workload, string> = {
  list: '`GET /v1/pets?limit=20`',
  'list-status': '`GET /v1/pets?limit=20&status=available`',
  get: '`GET /v1/pets/{id}`, id random in 1..N',
  create: '`POST /v1/pets` `{"name":"Rex","categoryId":3}`, durable'
}

/** The same requests in json-server's terms. */
export const JSON_SERVER_REQUESTS: Record<Workload, string> = {
  list: '`GET /pets?_limit=20`',
  'list-status': '`GET /pets?_limit=20&status=available`',
  get: '`GET /pets/{id}`',
  create: '`POST /pets`'
}

export const NEW_PET_BODY = '{"name":"Rex","categoryId":3}'

/**
 * A workload against the API (service or ceiling), for a database of `animals`.
 * @example apiWorkload('get', 'bench-key-0123456789abcdef', 10_000).randomIdMax // 10000
 */
export function apiWorkload (workload: Workload, apiKey: string, animals: number): LoadSpec {
  const headers = { authorization: `Bearer ${apiKey}` }
  switch (workload) {
    case 'list': return { method: 'GET', path: '/v1/pets?limit=20', headers }
    case 'list-status': return { method: 'GET', path: '/v1/pets?limit=20&status=available', headers }
    case 'get': return { method: 'GET', path: '/v1/pets/', randomIdMax: animals, headers }
    case 'create': return { method: 'POST', path: '/v1/pets', headers: { ...headers, 'content-type': 'application/json' }, body: NEW_PET_BODY }
  }
}

/**
 * The same workload in json-server 0.17's terms: `_limit` pages, a field name filters.
 * @example jsonServerWorkload('list').path // '/pets?_limit=20'
 */
export function jsonServerWorkload (workload: Workload, animals: number): LoadSpec {
  switch (workload) {
    case 'list': return { method: 'GET', path: '/pets?_limit=20', headers: {} }
    case 'list-status': return { method: 'GET', path: '/pets?_limit=20&status=available', headers: {} }
    case 'get': return { method: 'GET', path: '/pets/', randomIdMax: animals, headers: {} }
    case 'create': return { method: 'POST', path: '/pets', headers: { 'content-type': 'application/json' }, body: NEW_PET_BODY }
  }
}
