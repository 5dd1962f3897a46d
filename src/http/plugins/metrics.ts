/**
 * Prometheus metrics: requests by operation and status, latency, calls of
 * deprecated operations by API key name (whom to warn before removal), store errors,
 * requests refused by the throttle of forged keys, idempotency-key sweeps; and, read from the
 * store at scrape time, the last backup, the pool's waiting clients and the reads by target. Scraped on a
 * listener of its own (src/process/metrics-listener.ts).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Store } from '../../store/store.js'

/** What the gauges read from the store, at each scrape only: no request pays for them. */
export type StoreReadings = Pick<Store, 'kind' | 'lastBackupAt' | 'waitingClients' | 'readCounts'>

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The metrics label of the route: its operationId, or a name for the routes around the API. */
    operation?: string
  }
}

/** @example const metrics = new Metrics(store, readKeyExpiries); metrics.idempotencySweeps.inc() */
export class Metrics {
  /** This process's own counts; with WORKERS > 1 the primary sums every worker's. */
  readonly registry = new Registry()
  readonly requests = new Counter({
    name: 'petstore_http_requests_total',
    help: 'HTTP requests answered, by operation and status code.',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry]
  })

  readonly latency = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'Time from the first byte of a request to the last byte of its response.',
    labelNames: ['operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry]
  })

  readonly deprecatedCalls = new Counter({
    name: 'petstore_deprecated_calls_total',
    help: 'Authenticated calls of deprecated operations, by operation and API key name.',
    labelNames: ['operation', 'key'] as const,
    registers: [this.registry]
  })

  readonly storeErrors = new Counter({
    name: 'petstore_store_errors_total',
    help: 'Requests answered 503 because the database was unavailable.',
    registers: [this.registry]
  })

  readonly authThrottled = new Counter({
    name: 'petstore_auth_throttled_total',
    help: 'Requests answered 429 because their address had too many failed authentications.',
    registers: [this.registry]
  })

  readonly idempotencySweeps = new Counter({
    name: 'petstore_idempotency_sweeps_total',
    help: 'Sweeps of expired idempotency keys finished.',
    registers: [this.registry]
  })

  readonly idempotencyKeysSwept = new Counter({
    name: 'petstore_idempotency_keys_swept_total',
    help: 'Expired idempotency keys deleted by the sweeps.',
    registers: [this.registry]
  })

  /** `keyExpiries`: each name's current key's expiry in unix seconds (src/domain/api-keys/lifecycle.ts expiryByName). */
  constructor (store: StoreReadings, keyExpiries: () => Promise<Map<string, number>>) {
    collectDefaultMetrics({ register: this.registry, prefix: 'petstore_' })
    // Read from the store at each scrape (never per request), so a key issued by the CLI shows at the next one.
    this.registry.registerMetric(new Gauge({
      name: 'petstore_api_key_expiry_timestamp_seconds',
      help: 'When each API key name\'s current key expires (seconds since the epoch); keys that never expire, retiring and revoked keys are left out.',
      labelNames: ['key'] as const,
      registers: [],
      // Every worker reads the same keys: the primary reports one value, not their sum.
      aggregator: 'max',
      async collect () {
        // A failed read keeps the last values.
        await keyExpiries().then((expiries) => {
          this.reset()
          for (const [key, seconds] of expiries) this.labels(key).set(seconds)
        }, () => {})
      }
    }))
    // A store that cannot answer keeps the gauge's last value: the scrape itself must not fail.
    this.registry.registerMetric(new Gauge({
      name: 'petstore_store_pool_waiting_clients',
      help: 'Store calls waiting for a connection of the PostgreSQL pool (always 0 on SQLite).',
      registers: [],
      async collect () { await store.waitingClients().then((waiting) => this.set(waiting), () => {}) }
    }))
    const readCounts = store.readCounts
    if (readCounts !== undefined) {
      this.registry.registerMetric(new Counter({
        name: 'petstore_store_reads_total',
        help: 'Lists and gets read by target: standby, primary (asked first, or to confirm a 404), fallback (the standby failed; the primary answered).',
        labelNames: ['target'] as const,
        registers: [],
        async collect () {
          // The store keeps the counts; a scrape copies them.
          const counts = await readCounts()
          this.reset()
          for (const [target, count] of Object.entries(counts)) this.labels(target).inc(count)
        }
      }))
    }
    // PostgreSQL's backups are pg_dump's, which the service never sees: no series there.
    if (store.kind !== 'sqlite') return
    this.registry.registerMetric(new Gauge({
      name: 'petstore_backup_last_success_timestamp_seconds',
      help: 'When the last checked backup (petstore backup) began, in unix seconds; when the database was created, if never.',
      registers: [],
      // Every worker reads the same database: the primary keeps one value, not their sum.
      aggregator: 'max',
      async collect () {
        await store.lastBackupAt().then((at) => { if (at !== undefined) this.set(at.getTime() / 1000) }, () => {})
      }
    }))
  }
}

/** Children of a metric by label values, each made once: prom-client hashes the label object on every un-childed call. */
function childCache<T> (): (key: string, make: () => T) => T {
  const children = new Map<string, T>()
  return (key, make) => {
    let child = children.get(key)
    if (child === undefined) {
      child = make()
      children.set(key, child)
    }
    return child
  }
}

async function metricsPlugin (app: FastifyInstance, { metrics }: { metrics: Metrics }): Promise<void> {
  // Label sets are bounded: operations times status codes, and the names of valid keys.
  const requests = childCache<{ inc: () => void }>()
  const latency = childCache<{ observe: (seconds: number) => void }>()
  const deprecatedCalls = childCache<{ inc: () => void }>()
  app.addHook('onResponse', (request, reply, done) => {
    const config = request.state.route.config
    // No route: another method on a known path (405), or no known path at all (the docs page is none either).
    const operation = config.operation ?? (reply.statusCode === 405 ? 'methodNotAllowed' : 'unmatched')
    const status = String(reply.statusCode)
    requests(`${operation} ${status}`, () => metrics.requests.labels(operation, status)).inc()
    latency(operation, () => metrics.latency.labels(operation)).observe(reply.elapsedTime / 1000)
    const caller = request.state.caller
    if (config.deprecatedAt !== undefined && caller !== undefined) {
      deprecatedCalls(`${operation} ${caller.keyName}`, () => metrics.deprecatedCalls.labels(operation, caller.keyName)).inc()
    }
    if (reply.statusCode === 503 && operation !== 'readyz') metrics.storeErrors.inc()
    done()
  })
}

/** @example await app.register(requestMetrics, options) */
export const requestMetrics = fp<{ metrics: Metrics }>(metricsPlugin, { name: 'petstore-metrics' })
