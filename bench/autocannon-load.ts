/**
 * The load generator where wrk is not installed: autocannon in a process of its
 * own (so it does not share the bench's event loop), printing one LoadResult as JSON.
 * Started by load.ts: `node --import tsx bench/autocannon-load.ts '<job as JSON>'`.
 */
import autocannon from 'autocannon'
import type { LoadResult, LoadSpec } from './load.js'
import { seededRandom } from './seeded-random.js'

interface Job {
  spec: LoadSpec
  origin: string
  connections: number
  seconds: number
}

/**
 * Runs one job with autocannon's programmatic API.
 * @example await measure({ spec, origin: 'http://127.0.0.1:8080', connections: 50, seconds: 10 })
 */
export async function measure ({ spec, origin, connections, seconds }: Job): Promise<LoadResult> {
  const random = seededRandom(1001)
  const pick = (): string => {
    if (spec.paths !== undefined) return spec.paths[Math.floor(random() * spec.paths.length)]!
    if (spec.randomIdMax !== undefined) return `${spec.path}${1 + Math.floor(random() * spec.randomIdMax)}`
    return spec.path
  }
  const dynamic = spec.paths !== undefined || spec.randomIdMax !== undefined
  const result = await autocannon({
    url: origin,
    connections,
    duration: seconds,
    timeout: 10,
    method: spec.method,
    headers: spec.headers,
    body: spec.body,
    requests: [dynamic ? { setupRequest: (request) => ({ ...request, path: pick() }) } : { path: spec.path }]
  })
  const requests = result.requests.total
  return {
    requests,
    seconds: result.duration,
    reqPerSec: requests / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    socketErrors: result.errors // connection errors, timeouts included
  }
}

const job = process.argv[2]
if (job !== undefined) process.stdout.write(`${JSON.stringify(await measure(JSON.parse(job) as Job))}\n`)
