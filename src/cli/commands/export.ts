import { once } from 'node:events'
import type { Command } from 'commander'
import { exportPages } from '../../store/export-pages.js'
import { addSettingFlags } from '../options.js'
import { formatPetLine } from '../pet-lines.js'
import { withStore } from '../with-store.js'

const PAGE_SIZE = 10_000

export function registerExportCommand (program: Command): void {
  const command = program.command('export')
    .description('Write every animal to stdout as JSON Lines, in id order, int64 values exact.')
    .addHelpText('after', '\nExample:\n  petstore export > animals.jsonl\n')
  addSettingFlags(command, ['databaseUrl']).action(async () => {
    // A reader that stops early (`| head`) is no failure of an export, which it only shortens;
    // before main's handler, for which any other command's lost output is one.
    process.stdout.prependListener('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0)
    })
    await withStore(command, async (store) => {
      for await (const page of exportPages(store, PAGE_SIZE)) {
        if (!process.stdout.write(`${page.map(formatPetLine).join('\n')}\n`)) await once(process.stdout, 'drain')
      }
    })
  })
}
