import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { query } from '../../support/database.js'
import { createTestDatabase, skippedFile, type TestDatabase } from '../../support/helper.js'
import { TcpProxy } from '../../support/tcp-proxy.js'
import { MalformedAddress, parseAddress } from '../../../src/store/postgres/address.js'
import { openStore } from '../../../src/store/open-store.js'
import { StoreUnavailable } from '../../../src/store/store-errors.js'
import type { Store } from '../../../src/store/store.js'

// A port of this test's own range that nothing listens on: a host that refuses.
const DEAD = '127.0.0.1:18701'

/** `url` with its host list replaced by `hosts` and `target_session_attrs` set when given. */
function withHosts (url: string, hosts: string[], target?: string): string {
  const parsed = new URL(url)
  const query = target === undefined ? '' : `?target_session_attrs=${target}`
  return `${parsed.protocol}//${parsed.username}@${hosts.join(',')}${parsed.pathname}${query}`
}

function hostOf (url: string): string {
  const parsed = new URL(url)
  return `${parsed.hostname}:${parsed.port || 5432}`
}

describe('postgres address: libpq\'s URL forms', () => {
  it('reads one host or several, each port optional, IPv6 in brackets', () => {
    const address = parseAddress('postgres://u:p@db1,db2:5433,[::1]:5434/petstore?sslmode=disable')
    assert.deepEqual(address.hosts.map((host) => host.label), ['db1', 'db2:5433', '[::1]:5434'])
    assert.deepEqual(address.hosts.map((host) => host.url), [
      'postgres://u:p@db1/petstore?sslmode=disable', 'postgres://u:p@db2:5433/petstore?sslmode=disable', 'postgres://u:p@[::1]:5434/petstore?sslmode=disable'])
  })

  it('means read-write with several hosts and no target_session_attrs, libpq\'s any with one', () => {
    assert.equal(parseAddress('postgres://u@db1,db2/petstore').target, 'read-write')
    assert.equal(parseAddress('postgres://u@db1,db2/petstore', 'prefer-standby').target, 'prefer-standby')
    assert.equal(parseAddress('postgres://u@db1/petstore').target, 'any')
    assert.equal(parseAddress('postgresql://u@db1/petstore?target_session_attrs=standby').target, 'standby')
    // One host without target_session_attrs goes to the driver exactly as written.
    assert.equal(parseAddress('postgres://u@db1/petstore?x=%20').hosts[0]!.url, 'postgres://u@db1/petstore?x=%20')
  })

  it('refuses what libpq would not take, saying what is wrong', () => {
    const refusals: Array<[string, RegExp]> = [
      ['postgres://u@db1,,db2/p', /empty host/],
      ['postgres://u@db1:5432,db2:99999/p', /db2:99999 does not/],
      ['postgres://u@db1:x/p', /db1:x does not/],
      ['postgres://u@db1/p?target_session_attrs=fastest', /target_session_attrs must be one of any, read-write, read-only, primary, standby, prefer-standby: fastest is not/],
      ['postgres://u@db1/p?target_session_attrs=any&target_session_attrs=standby', /more than once/]
    ]
    for (const [url, message] of refusals) assert.throws(() => parseAddress(url), (err: Error) => err instanceof MalformedAddress && message.test(err.message), url)
  })
})

const skip = process.env.TEST_DATABASE_URL === undefined ? 'TEST_DATABASE_URL is not set' : false
if (skip !== false) skippedFile(`PostgreSQL multi-host tests skipped: ${skip}`)

describe('postgres: a multi-host DATABASE_URL', { skip }, () => {
  let database: TestDatabase
  const stores: Store[] = []
  const open = async (url: string, timeoutMs = 1_000): Promise<Store> => {
    const store = await openStore(url, { timeoutMs, maxConnections: 4 })
    stores.push(store)
    return store
  }

  before(async () => {
    database = await createTestDatabase('postgres')
    const store = await open(database.url)
    await store.migrate()
  })
  after(async () => {
    for (const store of stores) await store.close().catch(() => {})
    await database?.drop()
  })

  it('skips a host that refuses and serves from the next, for every target that fits a primary', async () => {
    for (const target of [undefined, 'any', 'read-write', 'primary', 'prefer-standby']) {
      const store = await open(withHosts(database.url, [DEAD, hostOf(database.url)], target))
      const created = await store.createPet({ name: `via ${target ?? 'default'}`, categoryId: 1, status: 'available' })
      assert.equal((await store.findPet(created.pet.id))?.name, `via ${target ?? 'default'}`)
    }
  })

  it('skips a host that hangs within the connect timeout, which applies per host', async () => {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 18701 })
    proxy.cut('hang')
    try {
      const store = await open(withHosts(database.url, [`127.0.0.1:${proxy.port}`, hostOf(database.url)]), 600)
      const started = Date.now()
      await store.ping()
      const took = Date.now() - started
      assert.ok(took >= 550 && took < 1_500, `one host's timeout, then the next host: ${took} ms`)
    } finally {
      await proxy.close()
    }
  })

  it('refuses a primary for standby, and says why for each host, as a store outage (503)', async () => {
    const store = await open(withHosts(database.url, [DEAD, hostOf(database.url)], 'standby'))
    await assert.rejects(store.ping(), (err: Error) => err instanceof StoreUnavailable &&
      /no host suits target_session_attrs=standby \(127\.0\.0\.1:18701: .*ECONNREFUSED.*; .*: a read-write primary\)/.test((err.cause as Error).message))
  })

  describe('with a read-only node (its database\'s default_transaction_read_only on)', () => {
    let readOnly: TestDatabase
    before(async () => {
      readOnly = await createTestDatabase('postgres')
      await query(readOnly.directUrl, `ALTER DATABASE ${new URL(readOnly.directUrl).pathname.slice(1)} SET default_transaction_read_only = on`)
    })
    after(async () => { await readOnly?.drop() })

    it('takes it for any, read-only, primary and prefer-standby; refuses it for read-write and standby', async () => {
      const hosts = [DEAD, hostOf(readOnly.url)]
      for (const target of ['any', 'read-only', 'primary', 'prefer-standby']) await (await open(withHosts(readOnly.url, hosts, target))).ping()
      for (const target of [undefined, 'read-write', 'standby']) {
        await assert.rejects((await open(withHosts(readOnly.url, hosts, target))).ping(), StoreUnavailable, String(target))
      }
    })
  })

  it('drops every connection opened before a write met a read-only node: one 503, then the next create succeeds', async () => {
    const name = new URL(database.directUrl).pathname.slice(1)
    const store = await open(database.url)
    // The address leads to a read-only node while the pool opens its connections (a demoted primary behind a stale address)…
    await query(database.directUrl, `ALTER DATABASE ${name} SET default_transaction_read_only = on`)
    try {
      await Promise.all(Array.from({ length: 4 }, async () => await store.listPets({ limit: 1 })))
    } finally {
      // …then to the primary again: only new connections see it.
      await query(process.env.TEST_DATABASE_URL!, `ALTER DATABASE ${name} RESET default_transaction_read_only`)
    }
    const pet = { name: 'after the failover', categoryId: 1, status: 'available' as const }
    await assert.rejects(store.createPet(pet), (err: Error) => err instanceof StoreUnavailable && (err.cause as { code?: string }).code === '25006')
    const created = await store.createPet(pet)
    assert.equal(created.kind, 'created')
    for (let i = 0; i < 4; i++) assert.equal((await store.createPet(pet)).kind, 'created', 'no connection to the read-only node is left')
  })

  it('works through PgBouncer in transaction mode, each host checked with one statement', { skip: process.env.TEST_PGBOUNCER_URL === undefined ? 'TEST_PGBOUNCER_URL is not set' : false }, async () => {
    const viaBouncer = withHosts(database.url, [DEAD, hostOf(process.env.TEST_PGBOUNCER_URL!)], 'read-write')
    const store = await open(viaBouncer)
    const created = await Promise.all(Array.from({ length: 20 }, async (_, i) => await store.createPet({ name: `bounced ${i}`, categoryId: 2, status: 'available' })))
    assert.equal(created.filter((result) => result.kind === 'created').length, 20)
    assert.ok((await store.listPets({ limit: 100 })).some((pet) => pet.name === 'bounced 19'))
  })
})
