import type { Command } from 'commander'
import { openMigratedStore } from '../process/open-migrated-store.js'
import type { Store } from '../store/store.js'
import { settingsFrom } from './options.js'

/**
 * Runs work on the command's database (`--database-url` or DATABASE_URL, the only setting read),
 * migrated, and closes it after.
 * @example await withStore(command, (store) => store.listApiKeys())
 */
export async function withStore<T> (command: Command, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openMigratedStore(settingsFrom(command, ['databaseUrl']))
  try {
    return await work(store)
  } finally {
    await store.close()
  }
}
