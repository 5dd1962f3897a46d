import type { Command } from 'commander'
import { openMigratedStore } from '../../process/open-migrated-store.js'
import { addSettingFlags, settingsFrom } from '../options.js'

export function registerMigrateCommand (program: Command): void {
  const command = program.command('migrate')
    .description('Apply pending database migrations, then exit.')
  addSettingFlags(command, ['databaseUrl']).action(async () => {
    const store = await openMigratedStore(settingsFrom(command, ['databaseUrl']))
    await store.close()
    process.stdout.write('migrations applied\n')
  })
}
