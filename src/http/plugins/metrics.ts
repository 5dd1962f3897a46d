/**
 * The requests' metrics: requests by operation and status, latency, calls of deprecated
 * operations by API key name (whom to warn before removal), store errors, refusals for load by
 * reason, requests refused by the throttle of forged keys; counted into the process's registry (src/process/process-metrics.ts),
 * scraped on a listener of its own.
 */
import { Counter, Histogram, type Registry } from 'prom-client'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { REFUSAL_REASONS } from '../stages/admission.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The metrics label of the route: its operationId, or a name for the routes around the API. */
    operation?: string
    /** A readiness probe's route: its 503 says the process drains or its database does not answer, and is no store error of a request. */
    probe?: boolean
  }
}

/** @example const metrics = new RequestMetrics(registry); metrics.authThrottled.inc() */
export class RequestMetrics {
  readonly requests: Counter<'operation' | 'status'>
  readonly latency: Histogram<'operation'>
  readonly deprecatedCalls: Counter<'operation' | 'key'>
  readonly storeErrors: Counter
  readonly refusals: Counter<'reason'>
  readonly authThrottled: Counter

  constructor (registry: Registry) {
    const registers = [registry]
    this.requests = new Counter({ name: 'petstore_http_requests_total', help: 'HTTP requests answered, by operation and status code.', labelNames: ['operation', 'status'], registers })
    this.latency = new Histogram({
      name: 'petstore_http_request_duration_seconds',
      help: 'Time from the first byte of a request to the last byte of its response.',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers
    })
    this.deprecatedCalls = new Counter({ name: 'petstore_deprecated_calls_total', help: 'Authenticated calls of deprecated operations, by operation and API key name.', labelNames: ['operation', 'key'], registers })
    this.storeErrors = new Counter({ name: 'petstore_store_errors_total', help: 'Requests answered 503 because the database was unavailable.', registers })
    this.refusals = new Counter({ name: 'petstore_http_refusals_total', help: 'Requests answered 503 for load, by reason (src/http/stages/admission.ts): not store errors.', labelNames: ['reason'], registers })
    // Every reason from the start, so that a query finds each series before the first refusal.
    for (const reason of REFUSAL_REASONS) this.refusals.labels(reason).inc(0)
    this.authThrottled = new Counter({ name: 'petstore_auth_throttled_total', help: 'Requests answered 429 because their address had too many failed authentications.', registers })
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

async function metricsPlugin (app: FastifyInstance, { metrics }: { metrics: RequestMetrics }): Promise<void> {
  // Label sets are bounded: operations times status codes, and the names of valid keys.
  const requests = childCache<{ inc: () => void }>()
  const latency = childCache<{ observe: (seconds: number) => void }>()
  const deprecatedCalls = childCache<{ inc: () => void }>()
  const refusals = childCache<{ inc: () => void }>()
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
    const refused = request.state.refused
    if (refused !== undefined) refusals(refused, () => metrics.refusals.labels(refused)).inc()
    else if (reply.statusCode === 503 && config.probe !== true) metrics.storeErrors.inc()
    done()
  })
}

/** @example await app.register(requestMetrics, options) */
export const requestMetrics = fp<{ metrics: RequestMetrics }>(metricsPlugin, { name: 'petstore-metrics' })
