import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestDatabase, skippedFile, type TestDatabase } from '../support/helper.js'
import { runCli } from '../support/cli.js'
import { TEST_KEY } from '../support/constants.js'
import { startServerProcess } from '../support/process.js'

// A port of this test's own range that nothing listens on: the first host refuses.
const DEAD = '127.0.0.1:18702'

describe('DATABASE_URL and DATABASE_READ_URL: refused at start in one line', () => {
  const refusals: Array<[env: Record<string, string>, line: string]> = [
    [{ DATABASE_URL: 'postgres://u@db1:5432,db2:x/petstore' }, 'DATABASE_URL: must give each port as an integer from 1 to 65535: db2:x does not'],
    [{ DATABASE_URL: 'postgres://u@db1,db2/petstore?target_session_attrs=fastest' },
      'DATABASE_URL: target_session_attrs must be one of any, read-write, read-only, primary, standby, prefer-standby: fastest is not'],
    [{ DATABASE_URL: 'postgres://u@db1/petstore', DATABASE_READ_URL: 'postgres://u@db2,,db3/petstore' }, 'DATABASE_READ_URL: has an empty host in its host list'],
    [{ DATABASE_URL: 'sqlite:./never.db', DATABASE_READ_URL: 'postgres://u@db2/petstore' }, 'DATABASE_READ_URL: needs a postgres:// DATABASE_URL, as an SQLite file has no standby']
  ]

  it('serve', async () => {
    for (const [env, line] of refusals) {
      const result = await runCli(['serve'], { env })
      assert.equal(result.code, 1, line)
      assert.equal(result.stderr, `petstore: ${line}\n`)
    }
  })

  it('serve, by the read URL\'s flag too', async () => {
    const result = await runCli(['serve', '--database-url', 'postgres://u@db1/petstore', '--database-read-url', 'sqlite:./standby.db'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'petstore: --database-read-url: must be a postgres:// URL: an SQLite file has no standby\n')
  })

  it('every command that takes DATABASE_URL, by its flag too', async () => {
    const [env, line] = refusals[1]!
    for (const command of [['migrate'], ['keys', 'list'], ['seed', '--count', '1'], ['export']]) {
      const result = await runCli(command, { env })
      assert.equal(result.code, 1, command.join(' '))
      assert.equal(result.stderr, `petstore: ${line}\n`, command.join(' '))
    }
    const flagged = await runCli(['migrate', '--database-url', env.DATABASE_URL!])
    assert.equal(flagged.stderr, `petstore: ${line.replace('DATABASE_URL', '--database-url')}\n`)
  })
})

const skip = process.env.TEST_DATABASE_URL === undefined ? 'TEST_DATABASE_URL is not set' : false
if (skip !== false) skippedFile(`PostgreSQL multi-host commands skipped: ${skip}`)

describe('every command on a multi-host DATABASE_URL whose first host is down', { skip }, () => {
  let database: TestDatabase
  let url: string
  before(async () => {
    database = await createTestDatabase('postgres')
    const parsed = new URL(database.url)
    url = `postgres://${parsed.username}@${DEAD},${parsed.host}${parsed.pathname}?target_session_attrs=read-write`
  })
  after(async () => { await database?.drop() })

  it('migrate, keys, seed, import and export', async () => {
    const run = async (args: string[], input?: string): Promise<string> => {
      const result = await runCli(args, { env: { DATABASE_URL: url }, input })
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`)
      return result.stdout
    }
    await run(['migrate'])
    await run(['seed', '--count', '3'])
    await run(['import', '-'], '{"id":10,"name":"Rex","categoryId":3,"status":"sold"}\n')
    assert.equal((await run(['export'])).split('\n').filter((line) => line !== '').length, 4)
    assert.match(await run(['keys', 'create', '--name', 'hosts']), /^petstore_api_\S+\n$/)
    assert.match(await run(['keys', 'rotate', 'hosts']), /^petstore_api_\S+\n$/)
    assert.match(await run(['keys', 'list']), /^hosts\t/m)
    assert.equal(await run(['keys', 'revoke', 'hosts']), 'revoked hosts\n')
  })

  it('serve, its reads on a multi-host DATABASE_READ_URL', async () => {
    const readUrl = url.replace('target_session_attrs=read-write', 'target_session_attrs=prefer-standby')
    const server = await startServerProcess(url, { DATABASE_READ_URL: readUrl })
    try {
      const headers = { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }
      const created = await fetch(`${server.origin}/v1/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'Two hosts', categoryId: 3 }) })
      assert.equal(created.status, 201)
      const found = await fetch(created.headers.get('location')!, { headers })
      assert.equal(found.status, 200)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited
    }
  })
})
