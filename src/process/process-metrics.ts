/**
 * The process's own metrics, in the registry its requests' are counted in too
 * (src/http/plugins/metrics.ts): Node's runtime, the idempotency sweeps, and, read from the
 * store at scrape time only (no request pays for them), each key's expiry, the pool's waiting
 * clients, the reads by target and the last backup. Scraped on a listener of its own
 * (metrics-listener.ts).
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { expiryByName } from '../domain/api-keys/lifecycle.js'
import type { Store } from '../store/store.js'
import type { SweepCounts } from './idempotency-sweeper.js'

export interface ProcessMetrics {
  /** This process's series; with WORKERS > 1 the primary sums every worker's. */
  registry: Registry
  /** What the sweeper counts (idempotency-sweeper.ts). */
  sweeps: SweepCounts
}

/**
 * @example const { registry, sweeps } = processMetrics(store); await buildApp({ …, registry })
 */
export function processMetrics (store: Store): ProcessMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'petstore_' })
  const sweepsDone = new Counter({ name: 'petstore_idempotency_sweeps_total', help: 'Sweeps of expired idempotency keys finished.', registers: [registry] })
  const keysSwept = new Counter({ name: 'petstore_idempotency_keys_swept_total', help: 'Expired idempotency keys deleted by the sweeps.', registers: [registry] })
  registry.registerMetric(new Gauge({
    name: 'petstore_api_key_expiry_timestamp_seconds',
    help: 'When each API key name\'s current key expires (seconds since the epoch); keys that never expire, retiring and revoked keys are left out.',
    labelNames: ['key'] as const,
    registers: [],
    // Every worker reads the same keys: the primary reports one value, not their sum.
    aggregator: 'max',
    async collect () {
      // A failed read keeps the last values; a key issued by the CLI shows at the next scrape.
      await store.listApiKeys().then((records) => {
        this.reset()
        for (const [key, seconds] of expiryByName(records)) this.labels(key).set(seconds)
      }, () => {})
    }
  }))
  registry.registerMetric(new Gauge({
    name: 'petstore_store_pool_waiting_clients',
    help: 'Store calls waiting for a connection: of the PostgreSQL pool; on SQLite, creates waiting for the writer.',
    registers: [],
    collect () { this.set(store.waits.count()) }
  }))
  const readCounts = store.readCounts
  if (readCounts !== undefined) {
    registry.registerMetric(new Counter({
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
  if (store.kind === 'sqlite') {
    registry.registerMetric(new Gauge({
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
  return { registry, sweeps: { onBatch: (deleted) => { keysSwept.inc(deleted) }, onSweep: () => { sweepsDone.inc() } } }
}
