import type { Command } from 'commander'
import { parseTracing } from '../../config.js'
import { serve } from '../../server.js'
import { addSettingFlags, configFrom } from '../options.js'

export function registerServeCommand (program: Command): void {
  const command = program.command('serve')
    .description('Serve the API (the store is created and migrated on first start).')
  addSettingFlags(command).action(async () => {
    await serve(configFrom(command), parseTracing(process.env))
  })
}
