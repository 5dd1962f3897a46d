import { writeSync } from 'node:fs'
import type { Command } from 'commander'
import { ApiKeyNameTaken, NoApiKeyToRotate, issueApiKey, rotateApiKey, stateOf, type ApiKeyLifetime } from '../../domain/api-keys/lifecycle.js'
import { BrokenRule, duration, instant, integer } from '../../schemas/operator-values.js'
import { API_KEY_SCOPES, type ApiKeyScope } from '../../schemas/scopes.js'
import type { ApiKeyRecord, Store } from '../../store/store.js'
import { CliError } from '../errors.js'
import { addSettingFlags, parseFlag } from '../options.js'
import { withStore } from '../with-store.js'

const KEY_NAME = /^[A-Za-z0-9._-]{1,64}$/
// The names the keys of PETSTORE_API_KEYS and PETSTORE_READ_ONLY_KEYS go by (src/domain/api-keys/verifier.ts).
const CONFIGURED_KEY_NAME = /^env-(read-)?[0-9]+$/
const GRACE_DEFAULT = '24h'

/** `pets:read`, `pets:write` or both, comma-separated. */
function scopeList (raw: string): ApiKeyScope[] {
  const scopes = raw.split(',').map((scope) => scope.trim())
  const unknown = scopes.find((scope) => !(API_KEY_SCOPES as readonly string[]).includes(scope))
  if (unknown !== undefined) throw new BrokenRule(`${JSON.stringify(unknown)} is no scope; use ${API_KEY_SCOPES.join(', ')} or both, comma-separated`)
  return API_KEY_SCOPES.filter((scope) => scopes.includes(scope))
}

/** An RFC 3339 instant with its offset, after now. */
function futureInstant (raw: string): Date {
  const at = instant(raw)
  if (at.getTime() <= Date.now()) throw new BrokenRule(`${raw} is in the past`)
  return at
}

interface CreateFlags { name: string, scopes: string, expiresIn?: string, expiresAt?: string, rateLimit?: string }

/** The key as `keys list --json` shows it: never the key, never its hash. */
function listed (record: ApiKeyRecord, now: Date): Record<string, unknown> {
  return {
    name: record.name,
    state: stateOf(record, now),
    scopes: record.scopes,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    retiresAt: record.retiresAt,
    lastUsedAt: record.lastUsedAt,
    revokedAt: record.revokedAt,
    rateLimit: record.rateLimit
  }
}

/**
 * Prints a key once, at once (not queued): a key that cannot be printed is never received.
 * @returns the write error's one-line cause, or undefined once printed
 */
function printKey (key: string): string | undefined {
  try {
    writeSync(1, `${key}\n`)
    return undefined
  } catch (err) {
    return `cannot write the output (${(err as Error).message})`
  }
}

export function registerKeysCommands (program: Command): void {
  const keys = program.command('keys').description('Issue, rotate, list and revoke API keys (stored as SHA-256 hashes).')

  const create = keys.command('create')
    .description('Issue a key and print it once; only its hash is stored.')
    .requiredOption('--name <name>', 'who the key is for (1 to 64 of A-Z a-z 0-9 . _ -, not env-N), shown in metrics')
    .option('--scopes <list>', 'pets:read (list, get), pets:write (create), or both comma-separated', 'pets:read,pets:write')
    .option('--expires-in <duration>', 'lifetime: a positive integer and s, m, h or d (90d), at most 3650d; restarted by a rotation')
    .option('--expires-at <instant>', 'expiry: an RFC 3339 instant with its offset (2030-12-05T00:00:00Z); kept by a rotation')
    .option('--rate-limit <n>', 'requests a minute for this key, replacing RATE_LIMIT (0: no limit)')
  addSettingFlags(create, ['databaseUrl']).action(async (flags: CreateFlags) => {
    const { name } = flags
    if (!KEY_NAME.test(name)) throw new CliError('--name: must be 1 to 64 of A-Z a-z 0-9 . _ -')
    if (CONFIGURED_KEY_NAME.test(name)) throw new CliError('--name: env-1, env-read-1, … name the keys of the environment in metrics; choose another')
    if (flags.expiresIn !== undefined && flags.expiresAt !== undefined) throw new CliError('--expires-in: give it or --expires-at, not both')
    const scopes = parseFlag('--scopes', flags.scopes, scopeList)
    const lifetime: ApiKeyLifetime = flags.expiresIn !== undefined
      ? { seconds: parseFlag('--expires-in', flags.expiresIn, duration()) }
      : flags.expiresAt !== undefined ? { expiresAt: parseFlag('--expires-at', flags.expiresAt, futureInstant) } : undefined
    const rateLimit = flags.rateLimit === undefined ? undefined : parseFlag('--rate-limit', flags.rateLimit, integer(0, 999_999_999))
    await withStore(create, async (store) => {
      let key: string
      try {
        key = await issueApiKey(store, { name, scopes, lifetime, rateLimit })
      } catch (err) {
        if (err instanceof ApiKeyNameTaken) throw new CliError(`--name: ${err.message}`)
        throw err
      }
      const cause = printKey(key)
      if (cause !== undefined) await forgetUnseenKey(store, name, cause)
    })
  })

  const rotate = keys.command('rotate')
    .description('Issue the next key of a name (same scopes and limit) and print it once; the previous key works until the grace ends.')
    .argument('<name>', 'the name given at creation')
    .option('--grace <duration>', 'how long the previous key keeps working: an integer and s, m, h or d; 0s ends it at once', GRACE_DEFAULT)
  addSettingFlags(rotate, ['databaseUrl']).action(async (name: string, flags: { grace: string }) => {
    if (CONFIGURED_KEY_NAME.test(name)) throw new CliError(`${name}: is a key of the environment; change PETSTORE_API_KEYS or PETSTORE_READ_ONLY_KEYS instead`)
    const grace = parseFlag('--grace', flags.grace, duration({ zero: true }))
    await withStore(rotate, async (store) => {
      let key: string
      try {
        key = await rotateApiKey(store, name, grace)
      } catch (err) {
        if (err instanceof NoApiKeyToRotate) throw new CliError(err.message)
        throw err
      }
      const cause = printKey(key)
      if (cause !== undefined) throw new CliError(`${cause}; the new key of ${name} was lost: run petstore keys rotate ${name} --grace 0s again`)
    })
  })

  const list = keys.command('list')
    .description('List keys: name, state, scopes, dates (never the keys themselves, nor their hashes).')
    .option('--json', 'one JSON array, an object per key (a name being rotated has two)')
  addSettingFlags(list, ['databaseUrl']).action(async (flags: { json?: boolean }) => {
    const records = await withStore(list, (store) => store.listApiKeys())
    const now = new Date()
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(records.map((record) => listed(record, now)))}\n`)
      return
    }
    for (const record of records) {
      const state = stateOf(record, now)
      const when = state === 'revoked' ? ` ${record.revokedAt!.toISOString()}` : state === 'retiring' ? ` until ${record.retiresAt!.toISOString()}` : ''
      process.stdout.write(`${record.name}\tcreated ${record.createdAt.toISOString()}\t${state}${when}\t${record.scopes.join(',')}\t` +
        `expires ${record.expiresAt?.toISOString() ?? 'never'}\tlast used ${record.lastUsedAt?.toISOString() ?? 'never'}\n`)
    }
  })

  const revoke = keys.command('revoke')
    .description('Revoke every key of a name (current and retiring); instances stop accepting them within 5 s.')
    .argument('<name>', 'the name given at creation')
  addSettingFlags(revoke, ['databaseUrl']).action(async (name: string) => {
    const revoked = await withStore(revoke, (store) => store.revokeApiKey(name))
    if (!revoked) throw new CliError(`no active key named ${name}`)
    process.stdout.write(`revoked ${name}\n`)
  })
}

/** A key nobody received is deleted, so its name is free again. */
async function forgetUnseenKey (store: Store, name: string, cause: string): Promise<never> {
  try {
    await store.deleteApiKey(name)
  } catch {
    throw new CliError(`${cause}; the key could not be deleted either: run petstore keys revoke ${name}`)
  }
  throw new CliError(`${cause}; no key named ${name} was kept`)
}
