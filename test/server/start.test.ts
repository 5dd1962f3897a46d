import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { freePort, runCli, spawnCli, waitUntilUp } from '../support/cli.js'

describe('petstore serve (the process)', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-start-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('creates and migrates data/petstore.db, issues one key printed once, serves /v1, and closes cleanly on SIGTERM', async () => {
    const port = await freePort()
    const first = spawnCli(['serve'], { cwd: dir, env: { PORT: String(port) } })
    await waitUntilUp(`http://127.0.0.1:${port}/healthz`)
    assert.ok(existsSync(join(dir, 'data', 'petstore.db')))
    const key = /(ps_[A-Za-z0-9_-]{43})/.exec(first.output.stderr)?.[1]
    assert.ok(key, first.output.stderr)
    const created = await fetch(`http://127.0.0.1:${port}/v1/pets`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1}'
    })
    assert.equal(created.status, 201)
    assert.ok(!first.output.stdout.includes(key), 'the key is not in the log')
    first.kill('SIGTERM')
    const code = await new Promise((resolve) => first.on('exit', resolve))
    assert.equal(code, 0)
    assert.match(first.output.stdout, /"msg":"closed"/)

    // A second start finds the key in the store: nothing is issued or printed.
    const second = spawnCli(['serve'], { cwd: dir, env: { PORT: String(port) } })
    await waitUntilUp(`http://127.0.0.1:${port}/healthz`)
    const list = await fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
    assert.deepEqual(await list.json(), [{ id: 1, name: 'Rex', categoryId: 1, status: 'available' }])
    second.kill('SIGTERM')
    await new Promise((resolve) => second.on('exit', resolve))
    assert.ok(!second.output.stderr.includes('ps_'))
  })

  it('listens on HOST and PORT from flags as well as the environment', async () => {
    const port = await freePort()
    const child = spawnCli(['serve', '--port', String(port), '--database-url', `sqlite:${join(dir, 'flags.db')}`], { env: { PETSTORE_API_KEYS: 'flag-test-key-0123456789' } })
    try {
      await waitUntilUp(`http://127.0.0.1:${port}/healthz`)
      assert.ok(existsSync(join(dir, 'flags.db')))
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.on('exit', resolve))
    }
  })

  const BAD: Array<[Record<string, string>, string[], RegExp]> = [
    [{ PORT: '70000' }, [], /^petstore: PORT: must be an integer from 1 to 65535\n$/],
    [{ PORT: 'abc' }, [], /^petstore: PORT: /],
    [{}, ['--port', '0'], /^petstore: --port: must be an integer from 1 to 65535\n$/],
    [{ DATABASE_URL: 'mysql://localhost/db' }, [], /^petstore: DATABASE_URL: must start with sqlite: or postgres:\/\/\n$/],
    [{ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, [], /^petstore: DATABASE_URL: cannot open the database/],
    [{ LOG_LEVEL: 'loud' }, [], /^petstore: LOG_LEVEL: /],
    [{ WORKERS: '0' }, [], /^petstore: WORKERS: /],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, [], /^petstore: PUBLIC_BASE_URL: /],
    [{ RATE_LIMIT: '-1' }, [], /^petstore: RATE_LIMIT: /],
    [{ GETPET_SUNSET: 'soon' }, [], /^petstore: GETPET_SUNSET: /],
    [{ PETSTORE_API_KEYS: 'short' }, [], /^petstore: PETSTORE_API_KEYS: /]
  ]
  for (const [env, args, message] of BAD) {
    it(`stops with one line naming the variable and exit code 1 for ${JSON.stringify(env)} ${args.join(' ')}`, async () => {
      const result = await runCli(['serve', ...args], { cwd: dir, env })
      assert.equal(result.code, 1)
      assert.match(result.stderr, message)
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    })
  }

  it('stops with one line when the port is taken', async () => {
    const port = await freePort()
    const holder = spawnCli(['serve'], { cwd: dir, env: { PORT: String(port), PETSTORE_API_KEYS: 'port-test-key-0123456789' } })
    try {
      await waitUntilUp(`http://127.0.0.1:${port}/healthz`)
      const result = await runCli(['serve'], { cwd: dir, env: { PORT: String(port), PETSTORE_API_KEYS: 'port-test-key-0123456789' } })
      assert.equal(result.code, 1)
      assert.match(result.stderr, new RegExp(`^petstore: PORT: ${port} is already in use`))
    } finally {
      holder.kill('SIGTERM')
      await new Promise((resolve) => holder.on('exit', resolve))
    }
  })
})
