/**
 * The service on one Patroni cluster behind HAProxy (test/support/ha-cluster.ts), the whole leg on
 * it: lists and gets from the synchronous standby, then the failover (a planned switchover, a
 * leader killed as its machine dies, the old leader rejoining) under create and read load, on
 * instances through HAProxy's primary listener and on instances given both nodes in libpq's
 * multi-host form, all at once.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { query } from '../support/database.js'
import { AUTH, post, skippedFile, startTestServer, until, type TestServer } from '../support/helper.js'
import { listAll } from '../support/list-pages.js'
import { startFailoverLoad, storedIds, type Answer, type FailoverLoad } from '../support/failover-load.js'
import { FAILOVER_BOUND_MS, haClusterMissing, startHaCluster, type HaCluster } from '../support/ha-cluster.js'

/** Creates must succeed again within this long of a promotion (issue 32). */
const RECOVERY_LIMIT_MS = 10_000
/** The tail of the run in which every answer must be a success. */
const CALM_TAIL_MS = 5_000
/** How each instance of the failover reaches the primary: its index in the load's origins. */
const WAYS_IN = ['HAProxy', 'HAProxy', 'multi-host URL', 'multi-host URL'] as const
/** HAProxy marks a node down after 3 failed checks 500 ms apart (1.5 s, and a busy machine's delays): /readyz may pass until then. */
const HAPROXY_NOTICE_MS = 2_500

const missing = haClusterMissing()
if (missing !== false) skippedFile(`HA tests skipped: ${missing}`)

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
async function listedIds (server: TestServer, tally: Tally): Promise<Set<number>> {
  const pets = await listAll(`${server.api}/pets?limit=100`, { origin: () => server.origin })
  tally.lists++
  return new Set(pets.map((pet) => pet.id))
}

async function readCounts (server: TestServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  const counts: Record<string, number> = {}
  for (const [, target, value] of text.matchAll(/^petstore_store_reads_total\{target="(\w+)"\} (\d+)/gm)) counts[target!] = Number(value)
  return counts
}

/** Transactions the node has run in the database: on a standby, only reads. */
async function transactionsOn (url: string): Promise<number> {
  return Number((await query(url, "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = 'petstore'"))[0]!.n)
}

/** The transactions on `url` since `before`, once they reach `atLeast` or 15 s pass: a backend adds its counts to pg_stat_database at most once a second, and an idle one a second after its last. */
async function transactionsSince (url: string, before: number, atLeast: number): Promise<number> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const since = await transactionsOn(url) - before
    if (since >= atLeast || Date.now() > deadline) return since
    await sleep(200)
  }
}

describe('HA: one Patroni cluster for the leg', { skip: missing !== false }, () => {
  let cluster: HaCluster
  before(async () => { cluster = await startHaCluster() })
  after(async () => { await cluster?.stop() })

  describe('lists and gets from the synchronous standby, never stale, never failed by it', () => {
    let writer: TestServer
    let reader: TestServer

    before(async () => {
      const database = { url: cluster.primaryUrl, directUrl: cluster.primaryUrl, drop: async () => {} }
      writer = await startTestServer({ database, postgres: { readUrl: cluster.standbyUrl } })
      reader = await startTestServer({ database, postgres: { readUrl: cluster.standbyUrl } })
    })
    after(async () => {
      await writer?.close()
      await reader?.close()
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
          const listed = await listedIds(reader, tally)
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
      const took = Date.now() - started
      const counts = await readCounts(reader)
      const onStandby = await transactionsSince(standby, before, 1_000)
      console.log(`# steady: ${JSON.stringify(tally)} reads by target ${JSON.stringify(counts)}, ${onStandby} transactions on the standby, ${took} ms`)
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
      // A 503 names its cause: the admission stage's refusals (by reason), else the store.
      const refusals = (await (await fetch(`${reader.metrics.origin}/metrics`)).text()).match(/^petstore_http_refusals_total\S* [1-9]\d*$/gm) ?? []
      assert.deepEqual(Object.keys(tally.reads), ['200'], `no 503: ${JSON.stringify(tally.reads)}, refusals: ${refusals.join(', ') || 'none'}`)
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

  // Two instances through HAProxy's primary listener and two on both nodes directly (no target_session_attrs: read-write),
  // as pg_auto_failover and Patroni without a proxy are reached: one failover for both ways of reaching the primary.
  describe('failover through HAProxy and through the multi-host URL', () => {
    let instances: TestServer[] = []
    before(async () => {
      instances = await Promise.all(WAYS_IN.map(async (way) => await startTestServer({
        database: { url: way === 'HAProxy' ? cluster.primaryUrl : cluster.multiHostUrl, directUrl: cluster.primaryUrl, drop: async () => {} },
        // Admission off: four instances and their load share this process's event loop, a queue no one service has.
        env: { MAX_QUEUE_DELAY: 'off' }
      })))
    })
    after(async () => {
      for (const instance of instances) await instance.close()
    })

    it('rides out a switchover, a killed leader and its return: no 500, no dropped connection, every create stored once', async () => {
      const load = startFailoverLoad(cluster, instances.map((instance) => instance.origin), { writersPerInstance: 2 })
      const events: Array<{ name: string, at: number }> = []
      let killed: string
      try {
        await sleep(3_000)
        events.push({ name: 'switchover', at: Date.now() })
        await cluster.switchover()
        await sleep(5_000)
        events.push({ name: 'leader killed', at: Date.now() })
        killed = await cluster.killLeader()
        await until(() => load.primaryChanges.at(-1)?.node !== undefined && load.primaryChanges.at(-1)?.node !== killed, 60_000)
        await sleep(RECOVERY_LIMIT_MS)
        events.push({ name: 'old leader rejoins', at: Date.now() })
        await cluster.restartNode(killed)
        await sleep(CALM_TAIL_MS + 2_000)
      } finally {
        await load.stop()
      }
      const endedAt = Date.now()

      const stored = await storedIds(cluster.primaryUrl, load.acknowledged.map((ack) => ack.name))
      const report = summarize(load, events, endedAt)
      console.log([...report.lines, `  stored: ${stored.size} of the acknowledged names, ${[...stored.values()].flat().length} animals`,
        ...causesOf503(instances, report.promotions)].join('\n'))

      assert.deepEqual(load.answers.filter((answer) => answer.fault !== undefined).slice(0, 5).map(describeFault), [], 'every answer 200, 201, or 503 with Retry-After and the Error body')
      for (const promotion of report.promotions) {
        assert.ok(promotion.recoveredInMs <= RECOVERY_LIMIT_MS, `creates succeeded again ${promotion.recoveredInMs} ms after ${promotion.node} was promoted`)
      }
      assert.equal(report.promotions.length, 2, 'a promotion for the switchover and one for the killed leader')
      for (const gap of report.gaps) {
        assert.ok(gap.to - gap.from < FAILOVER_BOUND_MS, `no primary for ${gap.to - gap.from} ms: above FAILOVER_BOUND_MS, which readiness probes outlast`)
      }
      const tail = load.answers.filter((answer) => answer.endedAt > endedAt - CALM_TAIL_MS && answer.kind !== 'readyz')
      assert.ok(tail.length > 0)
      assert.deepEqual(tail.filter((answer) => answer.status >= 300).map(describeFault), [], `the last ${CALM_TAIL_MS / 1000} s all successes`)

      // /readyz: 503 once HAProxy has marked the dead primary down and for as long as no node surely answered as the primary; 200 at the end.
      for (const gap of report.gaps.filter((gap) => gap.heldTo - gap.from > HAPROXY_NOTICE_MS)) {
        const within = load.answers.filter((answer) => answer.kind === 'readyz' && answer.startedAt > gap.from + HAPROXY_NOTICE_MS && answer.endedAt < gap.heldTo)
        assert.ok(within.length > 0, 'readyz probed while no primary answered')
        assert.deepEqual(within.filter((answer) => answer.status !== 503).map(describeFault), [], '/readyz 503 while no primary answers')
      }
      const lastProbes = load.answers.filter((answer) => answer.kind === 'readyz' && answer.endedAt > endedAt - CALM_TAIL_MS)
      assert.ok(lastProbes.length > 0 && lastProbes.every((answer) => answer.status === 200), '/readyz 200 after')

      assert.deepEqual(load.clientCalls.filter((call) => call.error !== undefined).map((call) => call.error), [], 'the client package rode out every outage')
      assert.ok(report.clientLongestMs >= 1_000, 'the client waited through an outage')

      const wrong = load.acknowledged.filter((ack) => stored.get(ack.name)?.join() !== ack.id)
      assert.deepEqual(wrong.slice(0, 5).map((ack) => `${ack.name}: acknowledged ${ack.id}, stored ${stored.get(ack.name)?.join() ?? 'nowhere'}`), [], 'every acknowledged create stored exactly once')
    })
  })
})

function describeFault (answer: Answer): string {
  return `${answer.kind} on instance ${answer.instance + 1} (${WAYS_IN[answer.instance]!}) at ${new Date(answer.startedAt).toISOString()}: ${answer.fault ?? answer.status}`
}

/** Why the instances answered 503 (their log's store errors), before and after each promotion. */
function causesOf503 (instances: TestServer[], promotions: Array<{ node: string, at: number }>): string[] {
  const counts = new Map<string, number>()
  for (const line of instances.flatMap((instance) => instance.logs())) {
    if (line.msg !== 'store unavailable') continue
    const after = promotions.filter((p) => p.at <= (line.time as number)).at(-1)
    const key = `${after === undefined ? 'before any promotion' : `after ${after.node}'s promotion`}: ${(line.err as { message?: string } | undefined)?.message ?? '?'}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, count]) => `  503 cause ${key} × ${count}`)
}

/** The counts the closing note gives, and what the assertions need. */
function summarize (load: FailoverLoad, events: Array<{ name: string, at: number }>, endedAt: number): {
  lines: string[]
  promotions: Array<{ node: string, at: number, recoveredInMs: number }>
  /** Seen from `from` to `to`; surely no primary until `heldTo`, the watch's polls being slower than a promotion. */
  gaps: Array<{ from: number, to: number, heldTo: number }>
  longestOutageMs: number
  clientLongestMs: number
} {
  const start = load.primaryChanges[0]?.at ?? 0
  const seconds = (ms: number): string => (ms / 1000).toFixed(1)
  const creates = load.answers.filter((answer) => answer.kind === 'create')
  // Promotions: a node answering /primary where another did last.
  const primaries = load.primaryChanges.filter((change) => change.node !== undefined)
  const promotions = primaries.filter((change, i) => i > 0 && change.node !== primaries[i - 1]!.node).map((change) => {
    const next = events.find((event) => event.at > change.at)?.at ?? endedAt
    const lastFailure = creates.filter((answer) => answer.status === 503 && answer.endedAt >= change.at && answer.endedAt < next).at(-1)
    return { node: change.node!, at: change.at, recoveredInMs: lastFailure === undefined ? 0 : lastFailure.endedAt - change.at }
  })
  const gaps = load.primaryChanges.flatMap((change, i) =>
    change.node === undefined ? [{ from: change.at, to: load.primaryChanges[i + 1]?.at ?? endedAt, heldTo: change.heldAt }] : [])
  // An outage: from the first to the last 503 of creates around an event.
  const outages = events.map((event, i) => {
    const failures = creates.filter((answer) => answer.status === 503 && answer.startedAt >= event.at && answer.startedAt < (events[i + 1]?.at ?? endedAt))
    return { event: event.name, ms: failures.length === 0 ? 0 : failures.at(-1)!.endedAt - failures[0]!.startedAt, count: failures.length }
  })
  const byStatus = (kind: Answer['kind']): string => {
    const counts = new Map<number, number>()
    for (const answer of load.answers.filter((a) => a.kind === kind)) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1)
    return [...counts].sort(([a], [b]) => a - b).map(([status, count]) => `${status === 0 ? 'no answer' : status} × ${count}`).join(', ')
  }
  const clientErrors = load.clientCalls.filter((call) => call.error !== undefined).length
  const clientLongestMs = Math.max(0, ...load.clientCalls.map((call) => call.endedAt - call.startedAt))
  const longestOutageMs = Math.max(0, ...outages.map((outage) => outage.ms))
  const lines = [
    `failover: ${seconds(endedAt - start)} s of load on ${WAYS_IN.length} instances`,
    ...events.map((event) => `  ${event.name} at ${seconds(event.at - start)} s`),
    ...promotions.map((p) => `  ${p.node} promoted at ${seconds(p.at - start)} s; creates succeed again ${seconds(p.recoveredInMs)} s after`),
    ...gaps.map((gap) => `  no primary from ${seconds(gap.from - start)} s to ${seconds(gap.to - start)} s (${seconds(gap.to - gap.from)} s; surely until ${seconds(gap.heldTo - start)} s)`),
    ...outages.map((outage) => `  ${outage.event}: creates answered 503 for ${seconds(outage.ms)} s (${outage.count} answers)`),
    `  creates: ${byStatus('create')}`,
    `  lists: ${byStatus('list')}; gets: ${byStatus('get')}`,
    `  /readyz: ${byStatus('readyz')}`,
    `  acknowledged: ${load.acknowledged.length} creates`,
    `  client package: ${load.clientCalls.length} creates, ${clientErrors} errors, longest call ${seconds(clientLongestMs)} s`
  ]
  return { lines, promotions, gaps, longestOutageMs, clientLongestMs }
}
