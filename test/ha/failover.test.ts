/**
 * The service on a Patroni cluster behind HAProxy (test/support/ha-cluster.ts) while it fails
 * over: a planned switchover, a leader killed as its machine dies, the old leader rejoining.
 * Two instances under create and read load, one writer the client package with its defaults.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { skippedFile, startTestServer, type TestServer } from '../helper.js'
import { startFailoverLoad, type Answer, type FailoverLoad } from '../support/failover-load.js'
import { haClusterMissing, startHaCluster, type HaCluster } from '../support/ha-cluster.js'

/** Creates must succeed again within this long of a promotion (issue 32). */
const RECOVERY_LIMIT_MS = 10_000
/** The tail of the run in which every answer must be a success. */
const CALM_TAIL_MS = 5_000
/** HAProxy marks a node down after 3 failed checks 500 ms apart (1.5 s, and a busy machine's delays): /readyz may pass until then. */
const HAPROXY_NOTICE_MS = 2_500

const missing = haClusterMissing()
if (missing !== false) skippedFile(`HA tests skipped: ${missing}`)

// Through HAProxy's primary listener; test/ha/failover-multi-host.test.ts runs it again on both nodes in libpq's multi-host form.
const multiHost = process.env.HA_FAILOVER_VIA === 'multi-host'

describe(`failover through ${multiHost ? 'the multi-host URL' : 'HAProxy'}`, { skip: missing !== false }, () => {
  let cluster: HaCluster
  let instances: TestServer[] = []
  before(async () => {
    cluster = await startHaCluster()
    const database = { url: multiHost ? cluster.multiHostUrl : cluster.primaryUrl, directUrl: cluster.primaryUrl, drop: async () => {} }
    instances = await Promise.all([startTestServer({ database }), startTestServer({ database })])
  })
  after(async () => {
    for (const instance of instances) await instance.close()
    await cluster?.stop()
  })

  it('rides out a switchover, a killed leader and its return: no 500, no dropped connection, every create stored once', async () => {
    const load = startFailoverLoad(cluster, instances.map((instance) => instance.origin))
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
    const tail = load.answers.filter((answer) => answer.endedAt > endedAt - CALM_TAIL_MS && answer.kind !== 'readyz')
    assert.ok(tail.length > 0)
    assert.deepEqual(tail.filter((answer) => answer.status >= 300).map(describeFault), [], `the last ${CALM_TAIL_MS / 1000} s all successes`)

    // /readyz: 503 once HAProxy has marked the dead primary down and until a primary answers; 200 at the end.
    for (const gap of report.gaps.filter((gap) => gap.to - gap.from > HAPROXY_NOTICE_MS)) {
      const within = load.answers.filter((answer) => answer.kind === 'readyz' && answer.startedAt > gap.from + HAPROXY_NOTICE_MS && answer.endedAt < gap.to)
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

async function until (done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`)
    await sleep(100)
  }
}

function describeFault (answer: Answer): string {
  return `${answer.kind} on instance ${answer.instance + 1} at ${new Date(answer.startedAt).toISOString()}: ${answer.fault ?? answer.status}`
}

/** The ids stored under each name (one each, if every create was stored once). */
async function storedIds (url: string, names: string[]): Promise<Map<string, string[]>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ name: string, ids: string[] }>(
      'SELECT name, array_agg(id::text ORDER BY id) AS ids FROM pets WHERE name = ANY($1) GROUP BY name', [names])
    return new Map(rows.map((row) => [row.name, row.ids]))
  } finally {
    await client.end()
  }
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
  gaps: Array<{ from: number, to: number }>
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
    change.node === undefined ? [{ from: change.at, to: load.primaryChanges[i + 1]?.at ?? endedAt }] : [])
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
    `failover: ${seconds(endedAt - start)} s of load on 2 instances`,
    ...events.map((event) => `  ${event.name} at ${seconds(event.at - start)} s`),
    ...promotions.map((p) => `  ${p.node} promoted at ${seconds(p.at - start)} s; creates succeed again ${seconds(p.recoveredInMs)} s after`),
    ...gaps.map((gap) => `  no primary from ${seconds(gap.from - start)} s to ${seconds(gap.to - start)} s (${seconds(gap.to - gap.from)} s)`),
    ...outages.map((outage) => `  ${outage.event}: creates answered 503 for ${seconds(outage.ms)} s (${outage.count} answers)`),
    `  creates: ${byStatus('create')}`,
    `  lists: ${byStatus('list')}; gets: ${byStatus('get')}`,
    `  /readyz: ${byStatus('readyz')}`,
    `  acknowledged: ${load.acknowledged.length} creates`,
    `  client package: ${load.clientCalls.length} creates, ${clientErrors} errors, longest call ${seconds(clientLongestMs)} s`
  ]
  return { lines, promotions, gaps, longestOutageMs, clientLongestMs }
}
