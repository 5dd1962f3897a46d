import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { runCli, spawnCli } from '../support/cli.js'
import { freePort, waitUntilUp } from '../support/process.js'

/** Whether binding port 80 is refused (EACCES) to a user other than root, as on most hosts. */
function port80IsPrivileged (): boolean {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8')) > 80
  } catch {
    return true
  }
}

describe('petstore serve (the process)', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-start-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('creates and migrates data/petstore.db, issues one key printed once, serves /v1, and closes cleanly on SIGTERM', async () => {
    const port = await freePort()
    const first = spawnCli(['serve'], { cwd: dir, env: { PORT: String(port) } })
    await waitUntilUp(`http://127.0.0.1:${port}/healthz`)
    assert.ok(existsSync(join(dir, 'data', 'petstore.db')))
    const key = /(petstore_api_[0-9A-Za-z]{46})/.exec(first.output.stderr)?.[1]
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
    assert.ok(!second.output.stderr.includes('petstore_api_'))
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

  const KEY = 'host-test-key-0123456789'
  const BAD: Array<[Record<string, string>, string[], RegExp]> = [
    [{ PORT: '70000' }, [], /^petstore: PORT: must be an integer from 1 to 65535\n$/],
    [{ PORT: 'abc' }, [], /^petstore: PORT: /],
    [{}, ['--port', '0'], /^petstore: --port: must be an integer from 1 to 65535\n$/],
    [{ DATABASE_URL: 'mysql://localhost/db' }, [], /^petstore: DATABASE_URL: must start with sqlite: or postgres:\/\/\n$/],
    [{ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, [], /^petstore: DATABASE_URL: cannot open the database/],
    [{}, ['--database-url', 'postgres://nobody@127.0.0.1:1/none'], /^petstore: --database-url: cannot open the database/],
    // 192.0.2.1 (TEST-NET-1) is no address of this host: EADDRNOTAVAIL is the host's fault.
    [{ HOST: '192.0.2.1', PETSTORE_API_KEYS: KEY }, [], /^petstore: HOST: cannot listen on 192\.0\.2\.1:8080 \(listen EADDRNOTAVAIL/],
    [{ PETSTORE_API_KEYS: KEY }, ['--host', '192.0.2.1'], /^petstore: --host: cannot listen on 192\.0\.2\.1:8080 \(listen EADDRNOTAVAIL/],
    [{ LOG_LEVEL: 'loud' }, [], /^petstore: LOG_LEVEL: /],
    [{ WORKERS: '0' }, [], /^petstore: WORKERS: /],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, [], /^petstore: PUBLIC_BASE_URL: /],
    [{ RATE_LIMIT: '-1' }, [], /^petstore: RATE_LIMIT: /],
    [{ GETPET_SUNSET: 'soon' }, [], /^petstore: GETPET_SUNSET: /],
    [{ PETSTORE_API_KEYS: 'short' }, [], /^petstore: PETSTORE_API_KEYS: /]
  ]
  for (const [env, args, message] of BAD) {
    it(`stops with one line naming the setting as given and exit code 1 for ${JSON.stringify(env)} ${args.join(' ')}`, async () => {
      const result = await runCli(['serve', ...args], { cwd: dir, env })
      assert.equal(result.code, 1)
      assert.match(result.stderr, message)
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    })
  }

  it('stops with one line naming the port, as the variable or the flag it came from, when the port is taken', async () => {
    const port = await freePort()
    const holder = createServer().listen(port, '127.0.0.1')
    await once(holder, 'listening')
    try {
      const env = { PETSTORE_API_KEYS: 'port-test-key-0123456789' }
      const [fromEnv, fromFlag] = await Promise.all([
        runCli(['serve'], { cwd: dir, env: { ...env, PORT: String(port) } }),
        runCli(['serve', '--port', String(port)], { cwd: dir, env })
      ])
      assert.equal(fromEnv.code, 1)
      assert.equal(fromEnv.stderr, `petstore: PORT: ${port} is already in use on 127.0.0.1\n`)
      assert.equal(fromFlag.code, 1)
      assert.equal(fromFlag.stderr, `petstore: --port: ${port} is already in use on 127.0.0.1\n`)
    } finally {
      holder.close()
    }
  })

  it('names the port, not the host, when a user without privileges may not listen on port 80 (EACCES)', { skip: !port80IsPrivileged() && 'port 80 is not privileged here' }, async () => {
    const shared = mkdtempSync(join(tmpdir(), 'petstore-nobody-'))
    chmodSync(shared, 0o777)
    try {
      const options = { uid: process.getuid?.() === 0 ? 65534 : undefined, env: { PETSTORE_API_KEYS: 'port-test-key-0123456789' } }
      const [fromFlag, fromEnv] = await Promise.all([
        runCli(['serve', '--port', '80', '--database-url', `sqlite:${join(shared, 'flag.db')}`], options),
        runCli(['serve', '--database-url', `sqlite:${join(shared, 'env.db')}`], { ...options, env: { ...options.env, PORT: '80' } })
      ])
      assert.equal(fromFlag.code, 1)
      assert.match(fromFlag.stderr, /^petstore: --port: cannot listen on 127\.0\.0\.1:80 \(listen EACCES[^\n]*\)\n$/)
      assert.equal(fromEnv.code, 1)
      assert.match(fromEnv.stderr, /^petstore: PORT: cannot listen on 127\.0\.0\.1:80 \(listen EACCES[^\n]*\)\n$/)
    } finally {
      rmSync(shared, { recursive: true, force: true })
    }
  })
})
