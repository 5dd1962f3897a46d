#!/usr/bin/env node
/**
 * `petstore`: serve the API and run its operations from the shell. Errors are
 * one line on stderr and a non-zero exit code.
 */
import { Command, CommanderError } from 'commander'
import { CliError, describeFailure, isBug } from './errors.js'
import { registerBackupCommand } from './commands/backup.js'
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
    // Set before the commands are added, which inherit it; help and --version still go to stdout.
    .configureOutput({ outputError: (text, write) => write(usageErrorLine(text)) })
  registerServeCommand(program)
  registerMigrateCommand(program)
  registerKeysCommands(program)
  registerSeedCommand(program)
  registerImportCommand(program)
  registerExportCommand(program)
  registerBackupCommand(program)
  return program
}

/**
 * Commander's usage error (a missing option or argument, an unknown one) as the CLI's one line:
 * its words after `petstore:`, a suggestion it puts on a line of its own folded in.
 * @example usageErrorLine("error: unknown option '--cout'\n(Did you mean --count?)\n") // "petstore: unknown option '--cout' (Did you mean --count?)\n"
 */
function usageErrorLine (text: string): string {
  return `petstore: ${text.trim().replace(/^error: /, '').replace(/\s*\n\s*/g, ' ')}\n`
}

/**
 * Ends the process with one line on stderr and exit code 1 (or the CliError's). A bug's line says so; its
 * stack follows only with LOG_LEVEL=debug or trace in the environment.
 */
function fail (err: unknown): never {
  const bug = isBug(err)
  process.stderr.write(`petstore: ${describeFailure(err)}${bug ? ' (a bug: please report it; LOG_LEVEL=debug shows the stack)' : ''}\n`)
  if (bug && /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '')) process.stderr.write(`${(err as Error).stack ?? ''}\n`)
  process.exit(err instanceof CliError ? err.exitCode : 1)
}

async function main (): Promise<void> {
  // Output that cannot be written (a full disk, a reader gone) fails the command: `keys create`
  // prints its key once. `export` lets a reader stop early (src/cli/commands/export.ts).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    fail(new CliError(`cannot write the output (${err.message})`))
  })
  try {
    await buildCli().exitOverride().parseAsync(process.argv)
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode)
    fail(err)
  }
}

await main()
