import { writeSync } from 'node:fs'
import type { Command } from 'commander'
import { ApiKeyNameTaken, issueApiKey } from '../../domain/api-keys.js'
import { CliError } from '../errors.js'
import { addSettingFlags } from '../options.js'
import { withStore } from '../with-store.js'

const KEY_NAME = /^[A-Za-z0-9._-]{1,64}$/
// The names the keys of PETSTORE_API_KEYS go by in metrics and logs (src/domain/api-keys.ts).
const CONFIGURED_KEY_NAME = /^env-[0-9]+$/

export function registerKeysCommands (program: Command): void {
  const keys = program.command('keys').description('Issue, list and revoke API keys (stored as SHA-256 hashes).')

  const create = keys.command('create')
    .description('Issue a key and print it once; only its hash is stored.')
    .requiredOption('--name <name>', 'who the key is for (1 to 64 of A-Z a-z 0-9 . _ -, not env-N), shown in metrics')
  addSettingFlags(create, ['databaseUrl']).action(async ({ name }: { name: string }) => {
    if (!KEY_NAME.test(name)) throw new CliError('--name: must be 1 to 64 of A-Z a-z 0-9 . _ -')
    if (CONFIGURED_KEY_NAME.test(name)) throw new CliError('--name: env-1, env-2, … name the keys of PETSTORE_API_KEYS in metrics; choose another')
    await withStore(create, async (store) => {
      let key: string
      try {
        key = await issueApiKey(store, name)
      } catch (err) {
        if (err instanceof ApiKeyNameTaken) throw new CliError(`--name: ${err.message}`)
        throw err
      }
      try {
        // Written at once, not queued: a key that cannot be printed is never received, so it must not stay.
        writeSync(1, `${key}\n`)
      } catch (err) {
        const cause = `cannot write the output (${(err as Error).message})`
        try {
          await store.deleteApiKey(name)
        } catch {
          throw new CliError(`${cause}; the key could not be deleted either: run petstore keys revoke ${name}`)
        }
        throw new CliError(`${cause}; no key named ${name} was kept`)
      }
    })
  })

  const list = keys.command('list').description('List keys: name, created, revoked (never the keys themselves).')
  addSettingFlags(list, ['databaseUrl']).action(async () => {
    const records = await withStore(list, (store) => store.listApiKeys())
    for (const record of records) {
      process.stdout.write(`${record.name}\tcreated ${record.createdAt}\t${record.revokedAt === null ? 'active' : `revoked ${record.revokedAt}`}\n`)
    }
  })

  const revoke = keys.command('revoke')
    .description('Revoke a key by name; instances stop accepting it within 5 s.')
    .argument('<name>', 'the name given at creation')
  addSettingFlags(revoke, ['databaseUrl']).action(async (name: string) => {
    const revoked = await withStore(revoke, (store) => store.revokeApiKey(name))
    if (!revoked) throw new CliError(`no active key named ${name}`)
    process.stdout.write(`revoked ${name}\n`)
  })
}
