import type { Command } from 'commander'
import { openMigratedStore } from '../../server.js'
import { addSettingFlags, configFrom } from '../options.js'

export function registerMigrateCommand (program: Command): void {
  const command = program.command('migrate')
    .description('Apply pending database migrations, then exit.')
  addSettingFlags(command, ['databaseUrl']).action(async () => {
    const store = await openMigratedStore(configFrom(command))
    await store.close()
    process.stdout.write('migrations applied\n')
  })
}
