import { resolve } from 'node:path'
import { openSqliteStore } from './sqlite/store.js'
import type { PostgresOptions } from './postgres/store.js'
import { READ_ROUTING, routeReads } from './read-routing.js'
import type { Store } from './store.js'

/**
 * The database a URL names, by its scheme, before anything is opened.
 * @example databaseKind('postgres://db/petstore') // 'postgres'
 */
export function databaseKind (url: string): 'sqlite' | 'postgres' | undefined {
  if (url.startsWith('sqlite:')) return 'sqlite'
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgres'
  return undefined
}

/**
 * Picks the adapter by the URL's scheme: `sqlite:./file.db`, `sqlite:/abs/file.db`
 * or `postgres://…` (also `postgresql://…`, with its pool options; with a read URL, lists and gets read a standby).
 * @example const store = await openStore('sqlite:./data/petstore.db')
 */
export async function openStore (url: string, options: PostgresOptions = {}): Promise<Store> {
  const kind = databaseKind(url)
  if (kind === 'sqlite') return openSqliteStore(sqlitePath(url), options)
  if (kind === 'postgres') {
    const { openPostgresStore } = await import('./postgres/store.js')
    const store = await openPostgresStore(url, options)
    if (options.readUrl === undefined) return store
    const standby = await openPostgresStore(options.readUrl, { maxConnections: options.maxConnections, timeoutMs: READ_ROUTING.standbyTimeoutMs, poolWaitMs: options.poolWaitMs, standby: true })
    return routeReads(store, standby, READ_ROUTING)
  }
  throw new Error(`unknown database URL scheme: ${url.split(':')[0]}`)
}

function sqlitePath (url: string): string {
  return resolve(url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, ''))
}
