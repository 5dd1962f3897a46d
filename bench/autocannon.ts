/** The closed-loop load process, compiled as the peers are: one job as JSON in argv, its LoadResult on stdout. */
import autocannon from 'autocannon'
import { pickPath, type LoadResult } from './load.js'
import type { runLoad } from './targets.js'

const { spec, origin, connections, seconds } = JSON.parse(process.argv[2]!) as Parameters<typeof runLoad>[0]
const result = await autocannon({
  url: origin,
  connections,
  duration: seconds,
  // autocannon checks its clock once a sample (a second by default): a shorter run needs shorter samples.
  sampleInt: Math.min(1000, seconds * 1000),
  timeout: 10,
  method: spec.method,
  headers: spec.headers,
  body: spec.body,
  requests: [{ setupRequest: (request) => ({ ...request, path: pickPath(spec) }) }]
})
// req/s counts the 2xx only: a refusal, answered at once, is no request served.
const good = result.requests.total - result.non2xx
const refused = result.statusCodeStats?.['503']?.count ?? 0
process.stdout.write(JSON.stringify({
  requests: result.requests.total,
  good,
  reqPerSec: good / result.duration,
  p50Ms: result.latency.p50,
  p99Ms: result.latency.p99,
  refused,
  failed: result.non2xx - refused + result.errors
} satisfies LoadResult))
