import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { stateOf } from '../../src/domain/api-keys/lifecycle.js'
import { backends, createTestDatabase, openTestStore, type TestDatabase } from '../support/helper.js'
import { runCli } from '../support/cli.js'

interface ListedKey { name: string, state: string, scopes: string[], createdAt: string, expiresAt: string | null, lastUsedAt: string | null, revokedAt: string | null, rateLimit: number | null }

for (const backend of backends()) {
  describe(`${backend.name}: petstore keys create, rotate, list --json, revoke`, { skip: backend.skip }, () => {
    let database: TestDatabase
    const cli = async (...args: string[]) => await runCli([...args, '--database-url', database.url])
    const listJson = async (): Promise<ListedKey[]> => JSON.parse((await cli('keys', 'list', '--json')).stdout) as ListedKey[]
    /** The fields of `keys list --json` a step checks, read in this process; `keys list --json` itself runs in each of the three tests that follow. */
    const keysNow = async (): Promise<Array<Pick<ListedKey, 'name' | 'state' | 'expiresAt'>>> => {
      const store = await openTestStore(database)
      try {
        const now = new Date()
        return (await store.listApiKeys()).map((record) => ({ name: record.name, state: stateOf(record, now), expiresAt: record.expiresAt?.toISOString() ?? null }))
      } finally {
        await store.close()
      }
    }
    before(async () => { database = await createTestDatabase(backend.name) })
    after(async () => { await database.drop() })

    it('creates with scopes, a lifetime and a rate limit, and lists them as JSON without the key or its hash', async () => {
      const created = await cli('keys', 'create', '--name', 'page', '--scopes', 'pets:read', '--expires-in', '90d', '--rate-limit', '600')
      assert.equal(created.code, 0, created.stderr)
      const key = created.stdout.trim()
      const fixed = await cli('keys', 'create', '--name', 'fixed', '--expires-at', '2030-12-05T01:00:00+01:00')
      assert.equal(fixed.code, 0, fixed.stderr)
      // The rules of GETPET_SUNSET and RATE_LIMIT too: a fraction, a lower-case t and z, leading zeros.
      const lower = await cli('keys', 'create', '--name', 'lower', '--expires-at', '2031-01-01t00:00:00.5z', '--rate-limit', '0600')
      assert.equal(lower.code, 0, lower.stderr)
      const listed = await listJson()
      assert.deepEqual(listed.filter((entry) => entry.name === 'lower').map((entry) => [entry.expiresAt, entry.rateLimit]), [['2031-01-01T00:00:00.500Z', 600]])
      const page = listed.find((entry) => entry.name === 'page')!
      assert.deepEqual([page.state, page.scopes, page.rateLimit, page.lastUsedAt, page.revokedAt], ['active', ['pets:read'], 600, null, null])
      assert.ok(Math.abs(Date.parse(page.expiresAt!) - Date.now() - 90 * 86_400_000) < 60_000, page.expiresAt!)
      const both = listed.find((entry) => entry.name === 'fixed')!
      assert.deepEqual([both.scopes, both.expiresAt, both.rateLimit], [['pets:read', 'pets:write'], '2030-12-05T00:00:00.000Z', null])
      const text = JSON.stringify(listed)
      assert.ok(!text.includes(key) && !/[0-9a-f]{64}/.test(text), 'neither the key nor its hash')
    })

    it('rotates: two keys under the name, current and retiring; the expiry of --expires-in restarts, --expires-at stays', async () => {
      const rotated = await cli('keys', 'rotate', 'page', '--grace', '1h')
      assert.equal(rotated.code, 0, rotated.stderr)
      assert.match(rotated.stdout, /^petstore_api_[0-9A-Za-z]{46}\n$/)
      const page = (await listJson()).filter((entry) => entry.name === 'page')
      assert.deepEqual(page.map((entry) => entry.state), ['retiring', 'active'])
      assert.deepEqual(page.map((entry) => entry.scopes), [['pets:read'], ['pets:read']])
      assert.ok(Date.parse(page[1]!.expiresAt!) >= Date.parse(page[0]!.expiresAt!))
      assert.equal((await cli('keys', 'rotate', 'fixed')).code, 0)
      assert.deepEqual((await keysNow()).filter((entry) => entry.name === 'fixed').map((entry) => entry.expiresAt), ['2030-12-05T00:00:00.000Z', '2030-12-05T00:00:00.000Z'])
    })

    it('ends the retiring key at a second rotation, and both at a revoke; a revoked name cannot be rotated', async () => {
      assert.equal((await cli('keys', 'rotate', 'page', '--grace', '1h')).code, 0)
      assert.deepEqual((await keysNow()).filter((entry) => entry.name === 'page').map((entry) => entry.state), ['expired', 'retiring', 'active'])
      assert.equal((await cli('keys', 'revoke', 'page')).stdout, 'revoked page\n')
      assert.deepEqual((await listJson()).filter((entry) => entry.name === 'page').map((entry) => entry.state), ['revoked', 'revoked', 'revoked'])
      const again = await cli('keys', 'rotate', 'page')
      assert.deepEqual([again.code, again.stderr], [1, 'petstore: no key named page to rotate (never issued, or revoked)\n'])
    })

    // The flags are refused before the database is opened: one backend shows it for all.
    if (backend.name === 'sqlite') {
      it('refuses bad flags with one line naming the flag, exit code 1', async () => {
        for (const [args, message] of [
          [['keys', 'create', '--name', 'x', '--scopes', 'pets:delete'], '--scopes: "pets:delete" is no scope; use pets:read, pets:write or both, comma-separated'],
          [['keys', 'create', '--name', 'x', '--expires-in', '0x5'], '--expires-in: must be a positive integer followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d'],
          [['keys', 'create', '--name', 'x', '--expires-in', '3651d'], '--expires-in: must be a positive integer followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d'],
          [['keys', 'create', '--name', 'x', '--expires-in', '0s'], '--expires-in: must be a positive integer followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d'],
          [['keys', 'create', '--name', 'x', '--rate-limit', '-1'], '--rate-limit: must be an integer from 0 to 999999999'],
          [['keys', 'create', '--name', 'x', '--expires-at', '2020-01-01T00:00:00Z'], '--expires-at: 2020-01-01T00:00:00Z is in the past'],
          [['keys', 'create', '--name', 'x', '--expires-at', '2030-02-31T00:00:00Z'], '--expires-at: must be a date and time that exist: 2030-02-31T00:00:00 does not'],
          [['keys', 'create', '--name', 'x', '--expires-at', '2030-01-01T00:00:00'], '--expires-at: must be an RFC 3339 instant with its offset, YYYY-MM-DDThh:mm:ss[.fff] then Z or ±hh:mm, such as 2030-12-05T00:00:00Z'],
          [['keys', 'create', '--name', 'x', '--expires-in', '1d', '--expires-at', '2030-01-01T00:00:00Z'], '--expires-in: give it or --expires-at, not both'],
          [['keys', 'rotate', 'fixed', '--grace', '1w'], '--grace: must be an integer from 0 followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d'],
          [['keys', 'rotate', 'env-1'], 'env-1: is a key of the environment; change PETSTORE_API_KEYS or PETSTORE_READ_ONLY_KEYS instead'],
          [['keys', 'rotate', 'nobody'], 'no key named nobody to rotate (never issued, or revoked)']
        ] as const) {
          const result = await cli(...args)
          assert.deepEqual([result.code, result.stderr], [1, `petstore: ${message}\n`], args.join(' '))
        }
        assert.equal((await keysNow()).filter((entry) => entry.name === 'x').length, 0)
      })
    }
  })
}
