/**
 * The autocannon load process, when wrk is not installed: one job as JSON in argv, one
 * LoadResult as JSON on stdout. Compiled to plain JavaScript beside the peers, so the load
 * carries no TypeScript loader either.
 */
import autocannon from 'autocannon'
import type { LoadResult, LoadSpec } from './load.js'

const { spec, origin, connections, seconds } = JSON.parse(process.argv[2]!) as { spec: LoadSpec, origin: string, connections: number, seconds: number }
const pick = (): string => spec.paths?.[Math.floor(Math.random() * spec.paths.length)] ?? (spec.idMax === undefined ? spec.path : `${spec.path}${1 + Math.floor(Math.random() * spec.idMax)}`)
const { method, headers, body } = spec
// autocannon checks its clock once a sample (a second by default): a shorter run needs shorter samples.
const result = await autocannon({ url: origin, connections, duration: seconds, sampleInt: Math.min(1000, seconds * 1000), timeout: 10, method, headers, body, requests: [{ setupRequest: (request) => ({ ...request, path: pick() }) }] })
const requests = result.requests.total
const measured: LoadResult = { requests, reqPerSec: requests / result.duration, p50Ms: result.latency.p50, p99Ms: result.latency.p99, failed: result.non2xx + result.errors }
process.stdout.write(JSON.stringify(measured))
