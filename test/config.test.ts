import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ConfigError, GETPET_DEPRECATED_AT, SETTINGS, parseConfig, parseSettings } from '../src/config.js'
import { ROOT } from './support/constants.js'

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = parseConfig({})
    assert.equal(config.databaseUrl, 'sqlite:./data/petstore.db')
    assert.equal(config.port, 8080)
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.logLevel, 'info')
    assert.equal(config.workers, 1)
    assert.equal(config.rateLimit, 6000)
    assert.equal(config.getPetSunset.toISOString(), '2030-12-05T00:00:00.000Z')
    assert.deepEqual(config.apiKeys, [])
    assert.ok(Object.isFrozen(config))
  })

  it('takes flags over the environment', () => {
    assert.equal(parseConfig({ PORT: '9000' }, { port: '9001' }).port, 9001)
  })

  it('names each setting as it was given: the flag, else the variable (also for a default)', () => {
    const { names } = parseConfig({ PORT: '9000' }, { 'database-url': 'sqlite:./x.db' })
    assert.equal(names.databaseUrl, '--database-url')
    assert.equal(names.port, 'PORT')
    assert.equal(names.host, 'HOST')
  })

  it('reads WORKERS=auto as one per core, keys as a comma-separated list, base URLs without a trailing slash', () => {
    assert.ok(parseConfig({ WORKERS: 'auto' }).workers >= 1)
    assert.deepEqual(parseConfig({ PETSTORE_API_KEYS: 'aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb' }).apiKeys, ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb'])
    assert.equal(parseConfig({ PUBLIC_BASE_URL: 'https://api.example.com/v1/' }).publicBaseUrl, 'https://api.example.com/v1')
  })

  it('takes an empty variable as unset: the default applies, for every setting but DATABASE_URL', () => {
    const empty = Object.fromEntries(SETTINGS.filter((setting) => setting.env !== 'DATABASE_URL').map((setting) => [setting.env, '']))
    assert.deepEqual(parseConfig(empty), parseConfig({}))
    assert.equal(parseConfig({ PORT: '', WORKERS: '', LOG_LEVEL: '' }).port, 8080)
    assert.equal(parseConfig({ REDIS_KEY_PREFIX: '' }).redisKeyPrefix, 'petstore:')
  })

  it('refuses an empty DATABASE_URL, which a missing secret leaves: its default would be an empty local catalogue', () => {
    assert.throws(() => parseConfig({ DATABASE_URL: '' }), new ConfigError('DATABASE_URL: is empty: name a database, or unset it for sqlite:./data/petstore.db'))
    assert.throws(() => parseSettings(['databaseUrl'], { DATABASE_URL: '' }), /^ConfigError: DATABASE_URL: is empty/)
  })

  it('checks an empty flag as given: it wins over the variable', () => {
    assert.throws(() => parseConfig({ PORT: '9000' }, { port: '' }), new ConfigError('--port: must be an integer from 1 to 65535'))
    assert.equal(parseConfig({ PUBLIC_BASE_URL: 'https://api.example.com/v1' }, { 'public-base-url': '' }).publicBaseUrl, undefined)
  })

  it('parses only the settings asked for, so a bad value elsewhere is no error', () => {
    const settings = parseSettings(['databaseUrl'], { DATABASE_URL: 'sqlite:./x.db', PORT: '99999', LOG_LEVEL: 'warning' })
    assert.deepEqual({ ...settings }, { databaseUrl: 'sqlite:./x.db', names: { databaseUrl: 'DATABASE_URL' } })
    assert.throws(() => parseSettings(['databaseUrl'], { DATABASE_URL: 'mysql://x' }), new ConfigError('DATABASE_URL: must start with sqlite: or postgres://'))
  })

  it('says the variable and the rule in one line', () => {
    assert.throws(() => parseConfig({ PORT: '0' }), new ConfigError('PORT: must be an integer from 1 to 65535'))
    assert.throws(() => parseConfig({ DATABASE_URL: 'mysql://x' }), /^ConfigError: DATABASE_URL: must start with sqlite: or postgres:\/\/$/)
  })

  it('takes a base URL whose path ends in /v1, behind a path prefix too, and refuses any other', () => {
    assert.equal(parseConfig({ PUBLIC_BASE_URL: 'https://example.com/petstore/v1' }).publicBaseUrl, 'https://example.com/petstore/v1')
    assert.equal(parseConfig({ STAGING_BASE_URL: 'https://staging.example.com/v1/' }).stagingBaseUrl, 'https://staging.example.com/v1')
    for (const raw of ['https://api.example.com', 'https://api.example.com/', 'https://api.example.com/v2', 'https://api.example.com/V1', 'https://api.example.com/v1/pets', 'https://api.example.com/v1//', 'https://api.example.com/xv1']) {
      const rule = "must end in /v1, the API's version segment, such as https://api.example.com/v1"
      assert.throws(() => parseConfig({ PUBLIC_BASE_URL: raw }), new ConfigError(`PUBLIC_BASE_URL: ${rule}`), raw)
      assert.throws(() => parseConfig({ STAGING_BASE_URL: raw }), new ConfigError(`STAGING_BASE_URL: ${rule}`), raw)
    }
    // An empty query or fragment would stay in every link: https://api.example.com/v1?/pets/1.
    for (const raw of ['https://api.example.com/v1?', 'https://api.example.com/v1#', 'https://api.example.com/v1?x=1']) {
      assert.throws(() => parseConfig({ PUBLIC_BASE_URL: raw }), new ConfigError('PUBLIC_BASE_URL: must have no query or fragment'), raw)
    }
  })

  it('refuses a GETPET_SUNSET before getPet was deprecated, and takes the deprecation instant itself', () => {
    assert.throws(() => parseConfig({ GETPET_SUNSET: '2025-12-31T23:59:59Z' }),
      new ConfigError('GETPET_SUNSET: must not be before 2026-01-01T00:00:00Z, when getPet was deprecated'))
    assert.equal(parseConfig({ GETPET_SUNSET: '2026-01-01T00:00:00Z' }).getPetSunset.getTime(), GETPET_DEPRECATED_AT.getTime())
  })

  it('refuses a GETPET_SUNSET that does not exist rather than rolling it over', () => {
    for (const raw of ['2030-02-31T00:00:00Z', '2030-04-31T00:00:00Z', '2030-12-05T24:00:00Z', '2030-12-31T23:59:60Z', '2030-13-01T00:00:00+01:00']) {
      assert.throws(() => parseConfig({ GETPET_SUNSET: raw }), new ConfigError(`GETPET_SUNSET: must be a date and time that exist: ${raw.slice(0, 19)} does not`), raw)
    }
    assert.equal(parseConfig({ GETPET_SUNSET: '2032-02-29T00:00:00Z' }).getPetSunset.toISOString(), '2032-02-29T00:00:00.000Z')
  })

  it('reads GETPET_SUNSET with its offset, and refuses one without (it would be read in the machine\'s time zone)', () => {
    assert.equal(parseConfig({ GETPET_SUNSET: '2030-12-05T09:00:00+09:00' }).getPetSunset.toISOString(), '2030-12-05T00:00:00.000Z')
    assert.equal(parseConfig({ GETPET_SUNSET: '2030-12-04T19:30:00-04:30' }).getPetSunset.toISOString(), '2030-12-05T00:00:00.000Z')
    for (const raw of ['2030-12-05T00:00:00', '2030-12-05', '2030-12-05 00:00:00Z', '2030-12-05T00:00Z', '2030-12-05T00:00:00.Z', '2030-12-05T00:00:00.1234567891Z', '2030-12-05T00:00:00+0900', '2030-12-05T00:00:00+24:00', 'Thu, 05 Dec 2030 00:00:00 GMT']) {
      assert.throws(() => parseConfig({ GETPET_SUNSET: raw }),
        new ConfigError('GETPET_SUNSET: must be an RFC 3339 instant with its offset, YYYY-MM-DDThh:mm:ss[.fff] then Z or ±hh:mm, such as 2030-12-05T00:00:00Z'), raw)
    }
  })

  it('reads GETPET_SUNSET as `petstore keys create --expires-at` reads its instant: a fraction (up to the second the Sunset header names), a lower-case t and z', () => {
    for (const [raw, iso] of [
      ['2030-12-05T00:00:00.5Z', '2030-12-05T00:00:01.000Z'],
      ['2030-12-05t00:00:00z', '2030-12-05T00:00:00.000Z'],
      ['2030-12-05T08:59:59.001234+09:00', '2030-12-05T00:00:00.000Z'],
      ['2025-12-31T23:59:59.9Z', '2026-01-01T00:00:00.000Z']
    ]) assert.equal(parseConfig({ GETPET_SUNSET: raw }).getPetSunset.toISOString(), iso, raw)
    assert.throws(() => parseConfig({ GETPET_SUNSET: '2030-02-31t00:00:00.5z' }), new ConfigError('GETPET_SUNSET: must be a date and time that exist: 2030-02-31T00:00:00 does not'))
  })

  it('reads integers as plain decimal digits, leading zeros too, as every flag of the CLI does', () => {
    assert.equal(parseConfig({ PORT: '08080' }).port, 8080)
    assert.equal(parseConfig({ SHUTDOWN_DELAY: '0000000000030' }).shutdownDelay, 30)
    for (const raw of ['+80', '80.0', '8e1', ' 80', '0x50', '']) {
      assert.throws(() => parseConfig({}, { port: raw }), new ConfigError('--port: must be an integer from 1 to 65535'), raw)
    }
  })

  it('reads TRUST_PROXY as addresses and CIDRs, trusting none when unset', () => {
    assert.deepEqual(parseConfig({}).trustProxy, [])
    assert.deepEqual(parseConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8' }).trustProxy, ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8'])
    for (const raw of ['true', '*', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/8', 'proxy.internal', '10.0.0.0/']) {
      assert.throws(() => parseConfig({ TRUST_PROXY: raw }), new ConfigError('TRUST_PROXY: must be comma-separated IP addresses or CIDRs, such as 10.0.0.0/8,127.0.0.1'), raw)
    }
  })

  it('reads CORS_ORIGINS as a list of exact origins, and refuses anything a browser never sends as Origin', () => {
    assert.deepEqual(parseConfig({}).corsOrigins, [])
    assert.deepEqual(parseConfig({ CORS_ORIGINS: 'https://shop.example, http://127.0.0.1:3000' }).corsOrigins, ['https://shop.example', 'http://127.0.0.1:3000'])
    const rule = 'each must be an origin as a browser sends it, scheme://host[:port] with nothing after, such as https://shop.example'
    for (const raw of ['https://shop.example/', 'https://shop.example/app', 'https://Shop.example', 'https://shop.example:443', '*', 'null', 'shop.example', 'ftp://shop.example', 'https://user@shop.example']) {
      assert.throws(() => parseConfig({ CORS_ORIGINS: `https://ok.example,${raw}` }), new ConfigError(`CORS_ORIGINS: ${rule}: ${raw} is not`), raw)
    }
  })

  it('states each setting\'s flag and default as SETTINGS does: every one in docs/cli.md, the newcomer\'s in the README', () => {
    // A row: | `VARIABLE` | [`--flag` |] default | what |; an empty default reads (none), or says in brackets what stands in.
    const rowsOf = (file: string): Map<string, string[]> => new Map(readFileSync(join(ROOT, file), 'utf8').split('\n')
      .map((line) => /^\| `([A-Z_]+)` \| (.*) \|$/.exec(line)).filter((row) => row !== null)
      .map(([, name, cells]) => [name!, cells!.split(' | ')]))
    const defaultCell = (value: string): string => value === '' ? '(' : `\`${value}\``
    const documented = rowsOf('docs/cli.md')
    assert.deepEqual([...documented.keys()], SETTINGS.map((setting) => setting.env), 'docs/cli.md lists every setting, in order')
    for (const setting of SETTINGS) {
      const [flag, value] = documented.get(setting.env)!
      assert.equal(flag, `\`--${setting.flag}\``, setting.env)
      assert.ok(value!.startsWith(defaultCell(setting.default)), `${setting.env}: ${value} in docs/cli.md`)
    }
    const kept = rowsOf('README.md')
    assert.ok(kept.size >= 5)
    for (const [name, [value]] of kept) {
      const setting = SETTINGS.find((setting) => setting.env === name)
      assert.ok(setting !== undefined, `the README names ${name}, no setting`)
      assert.ok(value!.startsWith(defaultCell(setting.default)), `${name}: ${value} in the README`)
    }
  })

  it('reads MAX_QUEUE_DELAY as milliseconds, off or 0 to 60000, and POOL_WAIT as 1 to 60000 ms', () => {
    assert.equal(parseConfig({}).maxQueueDelay, 50)
    assert.equal(parseConfig({}).poolWait, 1000)
    assert.equal(parseConfig({ MAX_QUEUE_DELAY: 'off' }).maxQueueDelay, undefined)
    assert.equal(parseConfig({ MAX_QUEUE_DELAY: '0' }).maxQueueDelay, 0)
    assert.equal(parseConfig({ MAX_QUEUE_DELAY: '250', POOL_WAIT: '60000' }).maxQueueDelay, 250)
    for (const raw of ['-1', '60001', '1.5', 'OFF', '50ms']) {
      assert.throws(() => parseConfig({ MAX_QUEUE_DELAY: raw }), new ConfigError('MAX_QUEUE_DELAY: must be off, or an integer from 0 to 60000'), raw)
    }
    for (const raw of ['0', '60001', 'off']) {
      assert.throws(() => parseConfig({ POOL_WAIT: raw }), new ConfigError('POOL_WAIT: must be an integer from 1 to 60000'), raw)
    }
  })

  it('lists every setting in .env.example with its default', () => {
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8')
    for (const setting of SETTINGS) assert.ok(example.includes(`\n${setting.env}=${setting.default ?? ''}\n`), setting.env)
  })
})
