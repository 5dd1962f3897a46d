import { ConfigError, type Settings } from '../config.js'
import { openStore } from '../store/open-store.js'
import type { PostgresOptions } from '../store/postgres/store.js'
import { driverReason } from '../store/store-errors.js'
import type { Store } from '../store/store.js'

/**
 * Opens and migrates the store, its reads on the standby of a read URL when one is given (`serve`),
 * with `pool`'s options over the settings';
 * an unreachable database is a ConfigError naming the setting
 * as the operator gave it (`--database-url` or DATABASE_URL). What `serve` and every CLI
 * command that touches the database start with.
 * @example const store = await openMigratedStore(parseSettings(['databaseUrl'], process.env))
 */
export async function openMigratedStore (config: Settings<'databaseUrl'> & { databaseReadUrl?: string, poolWait?: number }, pool: PostgresOptions = {}): Promise<Store> {
  let store: Store | undefined
  try {
    store = await openStore(config.databaseUrl, { readUrl: config.databaseReadUrl, poolWaitMs: config.poolWait, ...pool })
    await store.migrate()
    return store
  } catch (err) {
    await store?.close().catch(() => {})
    throw new ConfigError(`${config.names.databaseUrl}: cannot open the database (${driverReason(err as Error)})`)
  }
}
