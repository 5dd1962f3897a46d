/**
 * Load on instances of the service while something fails under them (a database failover, a
 * rolling update): writers that create with an Idempotency-Key of their own and retry it on 503
 * (or, asked, never retry), readers, the client package with its defaults, /readyz probes, and
 * during a failover a watch on which node Patroni says is the primary. Everything is recorded
 * with its time, for a test to judge.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { PetstoreClient } from '@petstore/client'
import { TEST_KEY } from './constants.js'
import { query } from './database.js'
import { AUTH, JSON_AUTH } from './helper.js'
import type { HaCluster } from './ha-cluster.js'

/** A writer waits this long after a failed create before trying again: short, to see the end of an outage closely. */
const WRITER_RETRY_MS = 250

/** One answer of the service: when it was asked and answered, and what it was. */
export interface Answer {
  kind: 'create' | 'list' | 'get' | 'readyz'
  instance: number
  startedAt: number
  endedAt: number
  /** 0: no answer (the connection dropped or was refused). */
  status: number
  /** The failure in words: a 503 without Retry-After or the Error body, a dropped connection. */
  fault?: string
  /** What was answered, for a failing assertion's message. */
  body?: string
}

export interface Acknowledged {
  key: string
  name: string
  id: string
}

/** A time Patroni's `/primary` began to answer 200 on a node, or stopped answering on every node. */
export interface PrimaryChange {
  /** When the watch first saw it (an answer's end: a little after the change). */
  at: number
  /** The new primary, or undefined when none answers. */
  node: string | undefined
  /** The latest time it surely still held: the start of the oldest poll behind the last answers that agreed. */
  heldAt: number
}

export interface Load {
  answers: Answer[]
  acknowledged: Acknowledged[]
  /** The client package's calls: each one's time, and its error if it threw. */
  clientCalls: Array<{ startedAt: number, endedAt: number, error?: string }>
  /** Stops asking; resolves once every writer's create in hand is answered (and, with retries, acknowledged). */
  stop: () => Promise<void>
}

export interface FailoverLoad extends Load {
  primaryChanges: PrimaryChange[]
}

export interface LoadOptions {
  /** Writers on each origin: 3 unless given. */
  writersPerInstance?: number
  /** False: a writer whose create failed moves on to a new key, as a client without retries (true unless given). */
  retryCreates?: boolean
  /** False: no /readyz probes, for an origin that is a balancer (true unless given). */
  probes?: boolean
  /** False: no client package writer (true unless given). */
  client?: boolean
}

async function answerOf (kind: Answer['kind'], instance: number, request: () => Promise<Response>): Promise<Answer & { response?: Response }> {
  const startedAt = Date.now()
  try {
    const response = await request()
    const body = await response.text()
    const answer: Answer & { response: Response, body: string } = { kind, instance, startedAt, endedAt: Date.now(), status: response.status, response, body }
    if (response.status === 503) {
      const error = JSON.parse(body) as Record<string, unknown>
      if (response.headers.get('retry-after') === null) answer.fault = '503 without Retry-After'
      else if (Object.keys(error).sort().join() !== 'code,message,status' || error.status !== 503) answer.fault = `503 without the Error body: ${body}`
    } else if (response.status >= 300) {
      answer.fault = `${response.status}: ${body}`
    }
    return answer
  } catch (err) {
    return { kind, instance, startedAt, endedAt: Date.now(), status: 0, fault: `no answer: ${String((err as Error).cause ?? err)}` }
  }
}

/**
 * Starts the load on `origins` (http://127.0.0.1:PORT of each instance, or of a balancer) and returns at once.
 * @example const load = startLoad([balancer], { retryCreates: false, probes: false, client: false }); …; await load.stop()
 */
export function startLoad (origins: string[], options: LoadOptions = {}): Load {
  const answers: Answer[] = []
  const acknowledged: Acknowledged[] = []
  const clientCalls: Load['clientCalls'] = []
  const stopping = new AbortController()
  const loops: Array<Promise<void>> = []

  const writer = async (instance: number): Promise<void> => {
    while (!stopping.signal.aborted) {
      const key = randomUUID()
      const name = `ha-${key}`
      // The same key until the create is acknowledged, however long the outage (unless retries are off).
      for (;;) {
        const answer = await answerOf('create', instance, async () => await fetch(`${origins[instance]}/v1/pets`, {
          method: 'POST',
          headers: { ...JSON_AUTH, 'idempotency-key': key },
          body: JSON.stringify({ name, categoryId: 1 })
        }))
        answers.push(answer)
        if (answer.status === 201) {
          acknowledged.push({ key, name, id: String((JSON.parse(answer.body!) as { id: number }).id) })
          break
        }
        await sleep(WRITER_RETRY_MS)
        if (options.retryCreates === false) break
      }
    }
  }

  const reader = async (instance: number): Promise<void> => {
    while (!stopping.signal.aborted) {
      const last = acknowledged.at(-1)
      const answer = last === undefined || answers.length % 2 === 0
        ? await answerOf('list', instance, async () => await fetch(`${origins[instance]}/v1/pets?limit=20`, { headers: AUTH }))
        : await answerOf('get', instance, async () => await fetch(`${origins[instance]}/v1/pets/${last.id}`, { headers: AUTH }))
      answers.push(answer)
      await sleep(answer.status === 200 ? 20 : WRITER_RETRY_MS)
    }
  }

  const probe = async (instance: number): Promise<void> => {
    while (!stopping.signal.aborted) {
      answers.push(await answerOf('readyz', instance, async () => await fetch(`${origins[instance]}/readyz`)))
      await sleep(200)
    }
  }

  const clientWriter = async (): Promise<void> => {
    // The client package as a caller uses it: its defaults, nothing tuned.
    const client = new PetstoreClient({ baseUrl: `${origins[0]}/v1`, apiKey: TEST_KEY })
    for (let n = 0; !stopping.signal.aborted; n++) {
      const startedAt = Date.now()
      const name = `client-${randomUUID()}`
      try {
        const pet = await client.createPet({ name, categoryId: 2 })
        clientCalls.push({ startedAt, endedAt: Date.now() })
        acknowledged.push({ key: `client-${n}`, name, id: String(pet.id) })
      } catch (err) {
        clientCalls.push({ startedAt, endedAt: Date.now(), error: String(err) })
      }
      await sleep(50)
    }
  }

  const perInstance = options.writersPerInstance ?? 3
  origins.forEach((_origin, instance) => {
    for (let n = 0; n < perInstance; n++) loops.push(writer(instance))
    loops.push(reader(instance))
    if (options.probes !== false) loops.push(probe(instance))
  })
  if (options.client !== false) loops.push(clientWriter())

  return {
    answers,
    acknowledged,
    clientCalls,
    async stop () {
      stopping.abort()
      await Promise.all(loops)
    }
  }
}

/**
 * The load of startLoad on `origins` while `cluster` fails over, with a watch on its primary.
 * @example const load = startFailoverLoad(cluster, [one.origin, two.origin]); await cluster.switchover(); await load.stop()
 */
export function startFailoverLoad (cluster: HaCluster, origins: string[], options: LoadOptions = {}): FailoverLoad {
  const load = startLoad(origins, options)
  const primaryChanges: PrimaryChange[] = []
  const stopping = new AbortController()

  const watchPrimary = async (): Promise<void> => {
    // Each node's last answer and the start of its poll; a node whose REST API is slow to answer
    // (a busy machine) keeps the role, and the time, it was last seen in.
    const seen = new Map<string, { primary: boolean, polledAt: number }>()
    let current: string | undefined = 'none yet'
    while (!stopping.signal.aborted) {
      const polledAt = Date.now()
      await Promise.all(cluster.nodes.map(async (node) => {
        try {
          const response = await fetch(`http://127.0.0.1:${node.restPort}/primary`, { signal: AbortSignal.timeout(2_000) })
          await response.body?.cancel()
          seen.set(node.name, { primary: response.status === 200, polledAt })
        } catch (err) {
          if ((err as Error).name !== 'TimeoutError') seen.set(node.name, { primary: false, polledAt })
        }
      }))
      const primary = cluster.nodes.find((node) => seen.get(node.name)?.primary === true)?.name
      const heldAt = Math.min(...cluster.nodes.map((node) => seen.get(node.name)?.polledAt ?? polledAt))
      if (primary !== current) primaryChanges.push({ at: Date.now(), node: primary, heldAt })
      else primaryChanges.at(-1)!.heldAt = heldAt
      current = primary
      await sleep(100)
    }
  }

  const watching = watchPrimary()

  return {
    ...load,
    primaryChanges,
    async stop () {
      stopping.abort()
      await load.stop()
      await watching
    }
  }
}

/**
 * The ids stored under each name in the database at `url` (one each, if every create was stored once).
 * @example const stored = await storedIds(url, load.acknowledged.map((ack) => ack.name))
 */
export async function storedIds (url: string, names: string[]): Promise<Map<string, string[]>> {
  const rows = await query(url, 'SELECT name, array_agg(id::text ORDER BY id) AS ids FROM pets WHERE name = ANY(?) GROUP BY name', [names])
  return new Map(rows.map((row) => [row.name as string, row.ids as string[]]))
}
