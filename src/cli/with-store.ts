import type { Command } from 'commander'
import { openMigratedStore } from '../server.js'
import type { Store } from '../store/store.js'
import { configFrom } from './options.js'

/**
 * Runs work on the command's database (`--database-url` or DATABASE_URL), migrated, and closes it after.
 * @example await withStore(command, (store) => store.listApiKeys())
 */
export async function withStore<T> (command: Command, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openMigratedStore(configFrom(command))
  try {
    return await work(store)
  } finally {
    await store.close()
  }
}
