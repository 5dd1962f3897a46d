/**
 * The store with a span per call, made here rather than by the drivers' instrumentation: one
 * place for both databases, and SQLite's writes run on a worker thread no instrumentation sees.
 * Used only when traces are on (src/process/tracing.ts).
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { wrapMethods, type Store } from './store.js'

// No span for these: the metrics read two at every scrape, and closing and the backup are no request's.
const UNTRACED = new Set(['close', 'lastBackupAt', 'readCounts', 'backup'])

/** `db.system.name` as OpenTelemetry's semantic conventions spell each database. */
const DB_SYSTEM = { sqlite: 'sqlite', postgres: 'postgresql' } as const

/**
 * Each call becomes a client span named for the operation (`findPet`), a child of the span
 * current when it was called. Its arguments never reach the span: they hold key hashes,
 * idempotency keys and cursor positions. A failure is named by its class, never its message.
 * @example const store = tracedStore(await openStore(url))
 */
export function tracedStore (store: Store): Store {
  const tracer = trace.getTracer('petstore-store')
  const system = DB_SYSTEM[store.kind]
  return wrapMethods(store, (operation, method) => UNTRACED.has(operation)
    ? method
    : async (...args) => {
      const span = tracer.startSpan(operation, {
        kind: SpanKind.CLIENT,
        // db.system as well: the name older backends and collectors still read.
        attributes: { 'db.system.name': system, 'db.system': system, 'db.operation.name': operation }
      })
      try {
        return await method(...args)
      } catch (err) {
        const name = err instanceof Error ? err.name : 'Error'
        span.setAttribute('error.type', name)
        span.setStatus({ code: SpanStatusCode.ERROR, message: name })
        throw err
      } finally {
        span.end()
      }
    })
}
