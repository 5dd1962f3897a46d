import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { runCli } from '../support/cli.js'

/** A bad value for every setting that only `serve` reads. */
const BAD_SERVER_SETTINGS: Record<string, [value: string, line: string]> = {
  DATABASE_READ_URL: ['sqlite:./standby.db', 'DATABASE_READ_URL: must be a postgres:// URL: an SQLite file has no standby'],
  PORT: ['99999', 'PORT: must be an integer from 1 to 65535'],
  HOST: ['bad host', 'HOST: must be a host name or an IP address'],
  METRICS_PORT: ['65536', 'METRICS_PORT: must be an integer from 0 to 65535'],
  METRICS_HOST: ['bad host', 'METRICS_HOST: must be a host name or an IP address'],
  PETSTORE_API_KEYS: ['short', 'PETSTORE_API_KEYS: each key must be 16 to 512 printable ASCII characters, without spaces'],
  TRUST_PROXY: ['true', 'TRUST_PROXY: must be comma-separated IP addresses or CIDRs, such as 10.0.0.0/8,127.0.0.1'],
  PUBLIC_BASE_URL: ['https://api.example.com', "PUBLIC_BASE_URL: must end in /v1, the API's version segment, such as https://api.example.com/v1"],
  STAGING_BASE_URL: ['nope', 'STAGING_BASE_URL: must be an absolute http(s) URL such as https://api.example.com/v1'],
  LOG_LEVEL: ['warning', 'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent'],
  WORKERS: ['0', 'WORKERS: must be an integer from 1 to 256'],
  RATE_LIMIT: ['-1', 'RATE_LIMIT: must be an integer from 0 to 1000000000'],
  REDIS_URL: ['http://cache:6379', 'REDIS_URL: must start with redis:// or rediss://'],
  REDIS_KEY_PREFIX: ['has space', 'REDIS_KEY_PREFIX: must be 1 to 64 printable ASCII characters, without spaces'],
  GETPET_SUNSET: ['2020-01-01T00:00:00Z', 'GETPET_SUNSET: must not be before 2026-01-01T00:00:00Z, when getPet was deprecated'],
  SHUTDOWN_DELAY: ['999', 'SHUTDOWN_DELAY: must be an integer from 0 to 300'],
  KEEP_ALIVE_TIMEOUT: ['0', 'KEEP_ALIVE_TIMEOUT: must be an integer from 1 to 86400'],
  MAX_QUEUE_DELAY: ['fast', 'MAX_QUEUE_DELAY: must be off, or an integer from 0 to 60000'],
  POOL_WAIT: ['0', 'POOL_WAIT: must be an integer from 1 to 60000'],
  CORS_ORIGINS: ['https://shop.example/', 'CORS_ORIGINS: each must be an origin as a browser sends it, scheme://host[:port] with nothing after, such as https://shop.example: https://shop.example/ is not']
}

const badServerEnv = Object.fromEntries(Object.entries(BAD_SERVER_SETTINGS).map(([name, [value]]) => [name, value]))

describe('settings: each command reads only those it uses', () => {
  let dir: string
  let url: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-cli-'))
    url = `sqlite:${join(dir, 'pets.db')}`
  })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('migrate, seed, import, export and keys run with a bad value in every server setting', async () => {
    const run = async (args: string[], input?: string): Promise<string> => {
      const result = await runCli([...args, '--database-url', url], { env: badServerEnv, input })
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`)
      assert.equal(result.stderr, '', args.join(' '))
      return result.stdout
    }
    assert.equal(await run(['migrate']), 'migrations applied\n')
    await run(['seed', '--count', '3'])
    await run(['import', '-'], '{"id":10,"name":"Rex","categoryId":3,"status":"sold"}\n')
    assert.deepEqual((await run(['export'])).split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { id: number }).id), [1, 2, 3, 10])
    assert.match(await run(['keys', 'create', '--name', 'ci']), /^petstore_api_\S+\n$/)
    assert.match(await run(['keys', 'list']), /^ci\tcreated \S+\tactive\tpets:read,pets:write\texpires never\tlast used never\n$/)
    assert.equal(await run(['keys', 'revoke', 'ci']), 'revoked ci\n')
  })

  it('the database URL they use is still checked, from the variable too', async () => {
    const result = await runCli(['migrate'], { env: { ...badServerEnv, DATABASE_URL: 'mysql://db/pets' } })
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'petstore: DATABASE_URL: must start with sqlite: or postgres://\n')
  })

  it('takes an empty variable as unset, as serve does', async () => {
    const empty = Object.fromEntries(Object.keys(BAD_SERVER_SETTINGS).map((name) => [name, '']))
    const result = await runCli(['migrate', '--database-url', url], { env: empty })
    assert.equal(result.code, 0, result.stderr)
  })

  it('serve still refuses a bad value in any setting at start, in one line', async () => {
    const results = await Promise.all(Object.entries(BAD_SERVER_SETTINGS).map(async ([name, [value, line]]) => {
      const result = await runCli(['serve', '--database-url', url], { env: { [name]: value } })
      return { name, line, ...result }
    }))
    for (const { name, line, code, stderr } of results) {
      assert.equal(code, 1, name)
      assert.equal(stderr, `petstore: ${line}\n`, name)
    }
  })
})
