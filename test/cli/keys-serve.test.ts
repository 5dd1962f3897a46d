import assert from 'node:assert/strict'
import { closeSync, openSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { backends, createTestDatabase, openTestStore, startTestServer, type Backend, type TestDatabase } from '../support/helper.js'
import { runCli, runCliIntoClosedPipe } from '../support/cli.js'

async function listPetsWith (database: TestDatabase, backend: Backend['name'], key: string): Promise<number> {
  const server = await startTestServer({ backend, database })
  try {
    return (await fetch(`${server.api}/pets`, { headers: { authorization: `Bearer ${key}` } })).status
  } finally {
    await server.close()
  }
}

for (const backend of backends()) {
  describe(`${backend.name}: petstore keys`, { skip: backend.skip }, () => {
    let database: TestDatabase
    before(async () => { database = await createTestDatabase(backend.name) })
    after(async () => { await database.drop() })

    it('creates a key that the API accepts, lists it without the key, and revokes it', async () => {
      const created = await runCli(['keys', 'create', '--name', 'ci-robot', '--database-url', database.url])
      assert.equal(created.code, 0, created.stderr)
      const key = created.stdout.trim()
      assert.match(key, /^\S{20,}$/)
      assert.equal(await listPetsWith(database, backend.name, key), 200)

      const listed = await runCli(['keys', 'list', '--database-url', database.url])
      assert.match(listed.stdout, /^ci-robot\tcreated \S+\tactive\tpets:read,pets:write\texpires never\tlast used \S+\n$/)
      assert.ok(!listed.stdout.includes(key), 'the key itself is never listed')

      const revoked = await runCli(['keys', 'revoke', 'ci-robot', '--database-url', database.url])
      assert.equal(revoked.stdout, 'revoked ci-robot\n')
      assert.match((await runCli(['keys', 'list', '--database-url', database.url])).stdout, /^ci-robot\tcreated \S+\trevoked \S+\t/)
      assert.equal(await listPetsWith(database, backend.name, key), 401)
    })

    it('fails with exit code 1 and keeps no key when the new key cannot be written out, since it is shown only once', async () => {
      const closedPipe = await runCliIntoClosedPipe(['keys', 'create', '--name', 'unseen', '--database-url', database.url])
      assert.equal(closedPipe.code, 1, closedPipe.stderr)
      assert.equal(closedPipe.stderr, 'petstore: cannot write the output (EPIPE: broken pipe, write); no key named unseen was kept\n')
      const full = openSync('/dev/full', 'w')
      try {
        const fullDisk = await runCli(['keys', 'create', '--name', 'unseen', '--database-url', database.url], { stdout: full })
        assert.equal(fullDisk.stderr, 'petstore: cannot write the output (ENOSPC: no space left on device, write); no key named unseen was kept\n')
        assert.equal(fullDisk.code, 1)
      } finally {
        closeSync(full)
      }
      const store = await openTestStore(database)
      try {
        assert.deepEqual((await store.listApiKeys()).filter((record) => record.name === 'unseen'), [], 'no key named unseen was kept')
      } finally {
        await store.close()
      }
      const named = await runCli(['keys', 'create', '--name', 'unseen', '--database-url', database.url])
      assert.equal(named.code, 0, 'the name is free again')
    })

    it('issues one key when several ask for the same name at once; the others get the one line, exit code 1', async () => {
      const results = await Promise.all([1, 2, 3, 4].map(() => runCli(['keys', 'create', '--name', 'twin', '--database-url', database.url])))
      assert.deepEqual(results.map((result) => result.code).sort(), [0, 1, 1, 1], results.map((result) => result.stderr).join(''))
      for (const refused of results.filter((result) => result.code === 1)) assert.equal(refused.stderr, 'petstore: --name: a key named twin exists already\n')
    })

    it('refuses a bad name, a second key of the same name and an unknown revoke in one line, exit code 1', async () => {
      // A bad name is refused before the database is opened: one backend shows it for all.
      const badNames = backend.name !== 'sqlite'
        ? []
        : [
            [['keys', 'create', '--name', 'has space'], 'petstore: --name: must be 1 to 64 of A-Z a-z 0-9 . _ -\n'],
            [['keys', 'create', '--name', 'env-1'], 'petstore: --name: env-1, env-read-1, … name the keys of the environment in metrics; choose another\n']
          ] as const
      for (const [args, message] of [
        ...badNames,
        [['keys', 'create', '--name', 'ci-robot'], 'petstore: --name: a key named ci-robot exists already\n'],
        [['keys', 'revoke', 'nobody'], 'petstore: no active key named nobody\n']
      ] as const) {
        const result = await runCli([...args, '--database-url', database.url])
        assert.equal(result.code, 1)
        assert.equal(result.stderr, message)
      }
    })
  })
}

describe('petstore serve --help and bad settings', () => {
  it('lists every setting with its variable', async () => {
    const help = await runCli(['serve', '--help'])
    assert.equal(help.code, 0)
    for (const flag of ['--port', '--host', '--database-url', '--public-base-url', '--workers', '--rate-limit', '--log-level']) {
      assert.match(help.stdout, new RegExp(`${flag} <value>`), flag)
    }
    assert.match(help.stdout, /env PORT, default 8080/)
  })

  it('stops at once on a bad port with one line naming the flag', async () => {
    const result = await runCli(['serve', '--port', '70000'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'petstore: --port: must be an integer from 1 to 65535\n')
  })

  it('answers an unknown command with a non-zero exit code and a hint', async () => {
    const result = await runCli(['frobnicate'])
    assert.notEqual(result.code, 0)
    assert.match(result.stderr, /unknown command 'frobnicate'/)
  })
})
