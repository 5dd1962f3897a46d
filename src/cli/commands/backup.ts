import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Command } from 'commander'
import { databaseKind } from '../../store/open-store.js'
import { CliError } from '../errors.js'
import { addSettingFlags, settingsFrom } from '../options.js'
import { startProgress, stoppedBy } from '../progress.js'
import { withStore } from '../with-store.js'

const MIB = 1024 * 1024

export function registerBackupCommand (program: Command): void {
  const command = program.command('backup')
    .description('Copy the SQLite database, while it serves, to a checked file (PostgreSQL: pg_dump -Fc).')
    .requiredOption('--to <file>', 'the backup file to write')
    .option('--force', 'replace the file when it exists')
    .addHelpText('after', '\nExample:\n  petstore backup --to /backup/petstore-$(date +%F).db --database-url sqlite:./data/petstore.db\n')
  addSettingFlags(command, ['databaseUrl']).action(async (options: { to: string, force?: boolean }) => {
    const { databaseUrl, names } = settingsFrom(command, ['databaseUrl'])
    if (databaseKind(databaseUrl) === 'postgres') {
      throw new CliError(`${names.databaseUrl} is PostgreSQL: back it up with pg_dump -Fc (docs/operations.md)`)
    }
    const file = resolve(options.to)
    if (options.force !== true && existsSync(file)) throw new CliError(`${file} exists; --force replaces it`)
    const started = performance.now()
    const record = await withStore(command, async (store) => {
      const progress = startProgress('backing up', 100, 'MiB')
      const stopping = new AbortController()
      // The bar's stop request, turned into the backup's abort.
      const watch = setInterval(() => {
        void progress.stopSignal().then((signal) => { if (signal !== undefined) stopping.abort(signal) })
      }, 100)
      try {
        // Every SQLite store has it; PostgreSQL was sent to pg_dump above.
        return await store.backup!(file, {
          signal: stopping.signal,
          onProgress: (copied, total) => progress.update(total === 0 ? 100 : 100 * copied / total, Math.round(copied / MIB))
        })
      } catch (err) {
        if (stopping.signal.aborted) throw stoppedBy(stopping.signal.reason as 'SIGINT' | 'SIGTERM', 'no backup was written')
        throw err
      } finally {
        clearInterval(watch)
        progress.stop()
      }
    })
    const seconds = (performance.now() - started) / 1000
    process.stdout.write(`backed up ${record.animals} animals to ${record.file} (${(record.bytes / MIB).toFixed(1)} MiB) in ${seconds.toFixed(1)} s\n`)
  })
}
