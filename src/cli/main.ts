#!/usr/bin/env node
/**
 * `petstore`: serve the API and run its operations from the shell. Errors are
 * one line on stderr and a non-zero exit code.
 */
import { Command, CommanderError } from 'commander'
import { ConfigError } from '../config.js'
import { CliError } from './errors.js'
import { registerExportCommand } from './commands/export.js'
import { registerImportCommand } from './commands/import.js'
import { registerKeysCommands } from './commands/keys.js'
import { registerMigrateCommand } from './commands/migrate.js'
import { registerSeedCommand } from './commands/seed.js'
import { registerServeCommand } from './commands/serve.js'

function buildCli (): Command {
  const program = new Command('petstore')
    .description('The Pet Store API service and its operations.')
    .version('1.0.0')
    .showHelpAfterError('(add --help for usage)')
  registerServeCommand(program)
  registerMigrateCommand(program)
  registerKeysCommands(program)
  registerSeedCommand(program)
  registerImportCommand(program)
  registerExportCommand(program)
  return program
}

async function main (): Promise<void> {
  try {
    await buildCli().exitOverride().parseAsync(process.argv)
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode)
    if (err instanceof ConfigError || err instanceof CliError) {
      process.stderr.write(`petstore: ${err.message}\n`)
      process.exit(1)
    }
    throw err
  }
}

await main()
