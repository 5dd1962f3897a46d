import { resolve } from 'node:path'
import { openSqliteStore } from './sqlite/store.js'
import type { PostgresOptions } from './postgres/store.js'
import type { Store } from './store.js'

/**
 * Picks the adapter by the URL's scheme: `sqlite:./file.db`, `sqlite:/abs/file.db`
 * or `postgres://…` (also `postgresql://…`, with its pool options).
 * @example const store = await openStore('sqlite:./data/petstore.db')
 */
export async function openStore (url: string, postgres: PostgresOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) return openSqliteStore(sqlitePath(url))
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { openPostgresStore } = await import('./postgres/store.js')
    return await openPostgresStore(url, postgres)
  }
  throw new Error(`unknown database URL scheme: ${url.split(':')[0]}`)
}

function sqlitePath (url: string): string {
  return resolve(url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, ''))
}
