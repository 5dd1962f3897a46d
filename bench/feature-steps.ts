/**
 * The steps of the feature-costs comparison (bench/feature-costs.ts), apart from
 * the server itself so that the report does not load the service's modules.
 */
import type { Workload } from './workloads.js'

/** In the order they are added; a step is named after its last feature. */
export const FEATURE_STEPS = ['durable', 'key-hash', 'rate-limit', 'headers', 'metrics', 'log'] as const
export type Feature = typeof FEATURE_STEPS[number]

/** What each step adds, for the report. */
export const FEATURE_TEXTS: Record<Feature, string> = {
  durable: 'the service\'s store: get reads the row from the SQLite file, create goes through its group commit (writer thread, fsync)',
  'key-hash': 'the key checked by its SHA-256 (the service\'s `ApiKeyVerifier`)',
  'rate-limit': 'the service\'s per-key rate limit: a count in its window counter (in memory) and the `RateLimit-Policy` and `RateLimit` headers',
  headers: 'the service\'s response headers: a new `X-Request-Id`, `Cache-Control`, the three security headers, and get\'s `Deprecation`, `Sunset` and `Link`',
  metrics: 'the service\'s metrics: a request counter and a latency histogram (prom-client), children cached as the service does',
  log: 'the service\'s request log line (pino, to its own destination), to a file'
}

/** Every step's features: the first n of FEATURE_STEPS. */
export function stepFeatures (step: Feature): Feature[] {
  return FEATURE_STEPS.slice(0, FEATURE_STEPS.indexOf(step) + 1)
}

/** Workloads whose feature costs are measured: the two the service is farthest from the ceiling on. */
export const COST_WORKLOADS: readonly Workload[] = ['get', 'create']
