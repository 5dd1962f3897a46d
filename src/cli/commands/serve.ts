import type { Command } from 'commander'
import { parseTracing } from '../../config.js'
import { addSettingFlags, configFrom } from '../options.js'

export function registerServeCommand (program: Command): void {
  const command = program.command('serve')
    .description('Serve the API (the store is created and migrated on first start).')
  addSettingFlags(command).action(async () => {
    // Loaded by serve alone: the other commands open a store and need no HTTP server.
    const { serve } = await import('../../process/server.js')
    await serve(configFrom(command), parseTracing(process.env))
  })
}
