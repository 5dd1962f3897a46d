import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { AUTH, post, skippedFile, startTestServer, type TestServer } from '../helper.js'
import { haClusterMissing, startHaCluster, type HaCluster } from '../support/ha-cluster.js'

// Ports of this file's own, apart from the failover test's cluster.
const BASE_PORT = 18710

const missing = haClusterMissing()
if (missing !== false) skippedFile(`HA standby reads skipped: ${missing}`)

interface Tally {
  creates: number
  create503: number
  gets: Record<number, number>
  lists: number
  listMisses: number
  reads: Record<number, number>
}

const newTally = (): Tally => ({ creates: 0, create503: 0, gets: {}, lists: 0, listMisses: 0, reads: {} })
const bump = (counts: Record<number, number>, status: number): void => { counts[status] = (counts[status] ?? 0) + 1 }

/** A create with its own Idempotency-Key, retried with it on 503 after Retry-After, as a careful client does. */
async function create (server: TestServer, name: string, tally: Tally): Promise<{ id: number, path: string }> {
  const key = randomUUID()
  for (let attempt = 0; attempt < 60; attempt++) {
    const response = await post(server, '/pets', { name, categoryId: 7 }, { 'idempotency-key': key })
    if (response.status === 201) {
      tally.creates++
      const { id } = await response.json() as { id: number }
      return { id, path: new URL(response.headers.get('location')!).pathname }
    }
    assert.equal(response.status, 503, await response.text())
    tally.create503++
    await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000)
  }
  throw new Error('a create never succeeded')
}

/** Every id of the list on `server`, paged to its end through its Link headers. */
async function listAll (server: TestServer, tally: Tally): Promise<Set<number>> {
  const ids = new Set<number>()
  let next: string | undefined = `${server.api}/pets?limit=100`
  while (next !== undefined) {
    const response: Response = await fetch(next, { headers: AUTH })
    assert.equal(response.status, 200, 'a list page')
    for (const pet of await response.json() as Array<{ id: number }>) ids.add(pet.id)
    const link = response.headers.get('link')?.match(/<([^>]+)>; rel="next"/)?.[1]
    next = link === undefined ? undefined : `${server.origin}${new URL(link).pathname}${new URL(link).search}`
  }
  tally.lists++
  return ids
}

async function readCounts (server: TestServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  const counts: Record<string, number> = {}
  for (const [, target, value] of text.matchAll(/^petstore_store_reads_total\{target="(\w+)"\} (\d+)/gm)) counts[target!] = Number(value)
  return counts
}

/** Transactions the node has run in the database: on a standby, only reads. */
async function transactionsOn (url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: string }>("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = 'petstore'")
    return Number(rows[0]!.n)
  } finally {
    await client.end()
  }
}

describe('HA: lists and gets from the synchronous standby, never stale, never failed by it', { skip: missing }, () => {
  let cluster: HaCluster
  let writer: TestServer
  let reader: TestServer

  before(async () => {
    cluster = await startHaCluster({ basePort: BASE_PORT })
    const database = { url: cluster.primaryUrl, directUrl: cluster.primaryUrl, drop: async () => {} }
    writer = await startTestServer({ database, postgres: { readUrl: cluster.standbyUrl } })
    reader = await startTestServer({ database, postgres: { readUrl: cluster.standbyUrl } })
  })
  after(async () => {
    await writer?.close()
    await reader?.close()
    await cluster?.stop()
  })

  const standbyName = async (): Promise<string> => {
    const leader = await cluster.leader()
    return cluster.nodes.find((node) => node.name !== leader)!.name
  }

  /** `count` creates on the writer, each got at once from the reader, every tenth followed by a list of the reader to its end. */
  async function createAndRead (count: number, tally: Tally, created: Set<number>, label: string): Promise<void> {
    for (let i = 0; i < count; i++) {
      const { id, path } = await create(writer, `${label} ${i}`, tally)
      created.add(id)
      bump(tally.gets, (await fetch(`${reader.origin}${path}`, { headers: AUTH })).status)
      if (i % 10 === 9) {
        const listed = await listAll(reader, tally)
        tally.listMisses += [...created].filter((known) => !listed.has(known)).length
      }
    }
  }

  it('1,000 creates, each got at once and every tenth listed on the other instance: every animal found, by the standby', async () => {
    const standby = cluster.superuserUrl(await standbyName())
    const before = await transactionsOn(standby)
    const tally = newTally()
    const created = new Set<number>()
    const started = Date.now()
    await createAndRead(1_000, tally, created, 'steady')
    const counts = await readCounts(reader)
    const onStandby = await transactionsOn(standby) - before
    console.log(`# steady: ${JSON.stringify(tally)} reads by target ${JSON.stringify(counts)}, ${onStandby} transactions on the standby, ${Date.now() - started} ms`)
    assert.deepEqual(tally.gets, { 200: 1_000 })
    assert.equal(tally.lists, 100)
    assert.equal(tally.listMisses, 0)
    assert.equal(counts.primary ?? 0, 0, 'no get needed the primary: remote_apply made every 201 visible on the standby')
    // A standby read past its 1 s is handed to the primary: a stall of a busy machine, not staleness.
    assert.ok((counts.fallback ?? 0) <= 10, `fallbacks: ${counts.fallback}`)
    assert.ok(onStandby >= 1_000, `the standby served the reads (pg_stat_database there: ${onStandby})`)
  })

  it('the same while the standby leaves and rejoins synchronous mode (its Patroni restarted): every get 200', async () => {
    const tally = newTally()
    const created = new Set<number>()
    const restarting = (async () => {
      await sleep(500)
      await cluster.restartPatroni(await standbyName())
    })()
    const state = { restarted: false }
    void restarting.finally(() => { state.restarted = true })
    // Until the standby is back in synchronous mode, and two rounds after.
    let rounds = 0
    while (!state.restarted || rounds < 2) {
      await createAndRead(50, tally, created, `restart ${rounds}`)
      if (state.restarted) rounds++
    }
    await restarting
    console.log(`# standby restarted: ${JSON.stringify(tally)} reads by target ${JSON.stringify(await readCounts(reader))}`)
    assert.deepEqual(Object.keys(tally.gets), ['200'], `every get 200: ${JSON.stringify(tally.gets)}`)
  })

  it('the standby killed under read load: no 503, and reads go back to it once it rejoins', async () => {
    const tally = newTally()
    const ids = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await create(writer, `kill ${i}`, tally)).id))
    const name = await standbyName()
    const state = { running: true }
    const load = Promise.all(Array.from({ length: 4 }, async (_, lane) => {
      for (let i = 0; state.running; i++) {
        const path = i % 2 === 0 ? `/pets/${ids[(i + lane) % ids.length]}` : '/pets?limit=20'
        bump(tally.reads, (await fetch(`${reader.api}${path}`, { headers: AUTH })).status)
      }
    }))
    try {
      await sleep(1_000)
      await cluster.killNode(name)
      await sleep(5_000)
    } finally {
      state.running = false
      await load
    }
    const afterKill = await readCounts(reader)
    console.log(`# standby killed: reads ${JSON.stringify(tally.reads)}, by target ${JSON.stringify(afterKill)}`)
    assert.deepEqual(Object.keys(tally.reads), ['200'], `no 503: ${JSON.stringify(tally.reads)}`)
    assert.ok((afterKill.fallback ?? 0) > 0)

    await cluster.restartNode(name)
    const standbyBefore = (await readCounts(reader)).standby ?? 0
    const deadline = Date.now() + 30_000
    while ((await readCounts(reader)).standby === standbyBefore) {
      assert.ok(Date.now() < deadline, 'the standby serves reads again within 30 s of rejoining')
      assert.equal((await fetch(`${reader.api}/pets?limit=1`, { headers: AUTH })).status, 200)
      await sleep(200)
    }
  })
})
