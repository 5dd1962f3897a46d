/**
 * The store with a span per call, made here rather than by the drivers' instrumentation: one
 * place for both databases, and SQLite's writes run on a worker thread no instrumentation sees.
 * Used only when traces are on (src/process/tracing.ts).
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { Store } from './store.js'

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
  async function call<T> (operation: string, run: () => Promise<T>): Promise<T> {
    const span = tracer.startSpan(operation, {
      kind: SpanKind.CLIENT,
      // db.system as well: the name older backends and collectors still read.
      attributes: { 'db.system.name': system, 'db.system': system, 'db.operation.name': operation }
    })
    try {
      return await run()
    } catch (err) {
      const name = err instanceof Error ? err.name : 'Error'
      span.setAttribute('error.type', name)
      span.setStatus({ code: SpanStatusCode.ERROR, message: name })
      throw err
    } finally {
      span.end()
    }
  }
  return {
    kind: store.kind,
    migrate: async () => await call('migrate', async () => await store.migrate()),
    ping: async () => { await call('ping', async () => { await store.ping() }) },
    close: async () => { await store.close() },
    listPets: async (options) => await call('listPets', async () => await store.listPets(options)),
    findPet: async (id) => await call('findPet', async () => await store.findPet(id)),
    createPet: async (pet, claim) => await call('createPet', async () => await store.createPet(pet, claim)),
    importPets: async (pets) => { await call('importPets', async () => { await store.importPets(pets) }) },
    insertPets: async (pets) => { await call('insertPets', async () => { await store.insertPets(pets) }) },
    analyze: async () => { await call('analyze', async () => { await store.analyze() }) },
    deleteIdempotencyKeys: async (olderThan, limit) => await call('deleteIdempotencyKeys', async () => await store.deleteIdempotencyKeys(olderThan, limit)),
    insertApiKey: async (key) => await call('insertApiKey', async () => await store.insertApiKey(key)),
    rotateApiKey: async (name, rotation) => await call('rotateApiKey', async () => await store.rotateApiKey(name, rotation)),
    recordApiKeyUses: async (uses) => { await call('recordApiKeyUses', async () => { await store.recordApiKeyUses(uses) }) },
    findApiKeyByHash: async (keyHash) => await call('findApiKeyByHash', async () => await store.findApiKeyByHash(keyHash)),
    listApiKeys: async () => await call('listApiKeys', async () => await store.listApiKeys()),
    revokeApiKey: async (name) => await call('revokeApiKey', async () => await store.revokeApiKey(name)),
    deleteApiKey: async (name) => { await call('deleteApiKey', async () => { await store.deleteApiKey(name) }) },
    // No span for these: the metrics read them at every scrape, the backup is no request's.
    ...(store.backup === undefined ? {} : { backup: store.backup }),
    lastBackupAt: async () => await store.lastBackupAt(),
    waitingClients: async () => await store.waitingClients(),
    ...(store.readCounts === undefined ? {} : { readCounts: store.readCounts }),
    secret: async (name) => await call('secret', async () => await store.secret(name))
  }
}
