/**
 * Starts the real service on a random free port, on a real database: a fresh
 * SQLite file, or a fresh PostgreSQL database when TEST_DATABASE_URL is set,
 * reached directly or through PgBouncer (TEST_PGBOUNCER_URL).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { after, before, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { App } from '../../src/app.js'
import { parseConfig, type Config } from '../../src/config.js'
import type { RequestTimeouts } from '../../src/schemas/limits.js'
import type { MetricsListener } from '../../src/process/metrics-listener.js'
import type { SweepCounts } from '../../src/process/idempotency-sweeper.js'
import { startServer } from '../../src/process/server.js'
import { openStore } from '../../src/store/open-store.js'
import type { PostgresOptions } from '../../src/store/postgres/store.js'
import type { Store } from '../../src/store/store.js'
import { exportPages } from '../../src/store/export-pages.js'
import { formatPetLine } from '../../src/cli/pet-lines.js'
import { createDatabase } from './postgres-database.js'
import { TEST_KEY } from './constants.js'

export const AUTH = { authorization: `Bearer ${TEST_KEY}` }
export const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' }

export interface Backend {
  /** `pgbouncer`: PostgreSQL reached through PgBouncer in transaction mode. */
  name: 'sqlite' | 'postgres' | 'pgbouncer'
  /** A reason to skip; false for every backend backends() lists. */
  skip: string | false
}

/** Printed once per run, by test/legs.test.ts, when PostgreSQL is left out. */
export const POSTGRES_SKIPPED = 'PostgreSQL tests skipped: TEST_DATABASE_URL is not set'
/** Printed once per run, by test/legs.test.ts, when PostgreSQL runs but not through PgBouncer. */
export const PGBOUNCER_SKIPPED = 'PostgreSQL tests through PgBouncer skipped: TEST_PGBOUNCER_URL is not set'

/**
 * The databases every API test runs against: SQLite; PostgreSQL when TEST_DATABASE_URL is
 * set; and PostgreSQL through PgBouncer when TEST_PGBOUNCER_URL is set too (its databases are
 * made on TEST_DATABASE_URL's server). A leg left out is left out silently, so a run shows one
 * skip line (POSTGRES_SKIPPED or PGBOUNCER_SKIPPED) rather than one per describe.
 * @example for (const backend of backends()) describe(`${backend.name}: GET /v1/pets`, { skip: backend.skip }, () => {…})
 * @example for (const postgres of backends('postgres', 'pgbouncer')) describe(`${postgres.name} store`, () => {…})
 */
export function backends (...only: Array<Backend['name']>): Backend[] {
  const all: Backend[] = [{ name: 'sqlite', skip: false }]
  if (process.env.TEST_DATABASE_URL !== undefined) {
    all.push({ name: 'postgres', skip: false })
    if (process.env.TEST_PGBOUNCER_URL !== undefined) all.push({ name: 'pgbouncer', skip: false })
  }
  return all.filter((backend) => only.length === 0 || only.includes(backend.name))
}

/**
 * For a file that skips for want of something on this machine: prints its one skip line; or,
 * under CI=true, where .ci/run provides everything, a test that fails with that line instead.
 * @example if (skip !== false) skippedFile(`PostgreSQL stop test skipped: ${skip}`)
 */
export function skippedFile (line: string): void {
  if (process.env.CI === 'true') it('has all it needs in CI', () => assert.fail(`CI=true, yet ${line}`))
  else console.log(line)
}

export interface TestDatabase {
  url: string
  /** The same database with no pooler between (url itself but on the pgbouncer backend), for setup a pooler would keep. */
  directUrl: string
  drop: () => Promise<void>
}

/** A database nobody else uses: a new SQLite file, or a PostgreSQL database held and emptied (test/support/postgres-database.ts). */
export async function createTestDatabase (backend: Backend['name']): Promise<TestDatabase> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-test-'))
    const url = `sqlite:${join(dir, 'petstore.db')}`
    return { url, directUrl: url, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const serverUrl = process.env.TEST_DATABASE_URL
  if (serverUrl === undefined) throw new Error('TEST_DATABASE_URL is not set')
  const via = backend === 'pgbouncer' ? process.env.TEST_PGBOUNCER_URL : serverUrl
  if (via === undefined) throw new Error('TEST_PGBOUNCER_URL is not set')
  return await createDatabase(serverUrl, 'test', via)
}

/** The store of a test database, its tables made (src/process/open-migrated-store.ts's openMigratedStore takes settings instead). */
export async function openTestStore (database: TestDatabase, postgres?: PostgresOptions): Promise<Store> {
  const store = await openStore(database.url, postgres)
  await store.migrate()
  return store
}

/**
 * What `petstore export` writes for the database at `url` (migrated first, as the CLI does), read in
 * this process: the same pages and lines without a process, for a test whose subject is not export.
 * @example assert.equal(await exportedLines(database.url), '')
 */
export async function exportedLines (url: string): Promise<string> {
  const store = await openTestStore({ url, directUrl: url, drop: async () => {} })
  try {
    let text = ''
    for await (const page of exportPages(store, 10_000)) text += `${page.map(formatPetLine).join('\n')}\n`
    return text
  } finally {
    await store.close()
  }
}

/**
 * Within a describe: a migrated store on a fresh database of `backend`, opened before its
 * tests, closed and dropped after them.
 * @example const fixture = useTestStore(backend.name); it('…', async () => { await fixture.store.listPets({ limit: 10 }) })
 */
export function useTestStore (backend: Backend['name']): { readonly store: Store, readonly database: TestDatabase } {
  let opened: { store: Store, database: TestDatabase } | undefined
  before(async () => {
    const database = await createTestDatabase(backend)
    opened = { database, store: await openTestStore(database) }
  })
  after(async () => {
    await opened?.store.close()
    await opened?.database.drop()
  })
  return {
    get store () { return opened!.store },
    get database () { return opened!.database }
  }
}

/**
 * Within a describe: two instances on one fresh database of `backend`, as behind a load
 * balancer, started before its tests and closed (the database dropped) after them.
 * @example const instances = useTwoInstances(backend.name); it('…', async () => { const { one, two } = instances })
 */
export function useTwoInstances (backend: Backend['name'], env?: Record<string, string>): { readonly one: TestServer, readonly two: TestServer } {
  let database: TestDatabase | undefined
  let servers: TestServer[] = []
  before(async () => {
    database = await createTestDatabase(backend)
    servers = await Promise.all([startTestServer({ database, env }), startTestServer({ database, env })])
  })
  after(async () => {
    for (const server of servers) await server.close()
    await database?.drop()
  })
  return {
    get one () { return servers[0]! },
    get two () { return servers[1]! }
  }
}

export interface TestServer {
  /** Base URL of the API, ending in /v1. */
  api: string
  /** Origin: http://127.0.0.1:PORT */
  origin: string
  /** The metrics listener, on a port of its own: `${metrics.origin}/metrics`. */
  metrics: MetricsListener
  /** The process metrics' counts of the idempotency sweeps. */
  sweeps: SweepCounts
  app: App
  store: Store
  database: TestDatabase
  /** Every log line written so far, parsed. */
  logs: () => Array<Record<string, unknown>>
  /** The raw log text, for searching. */
  logText: () => string
  close: () => Promise<void>
}

export interface StartOptions {
  backend?: Backend['name']
  env?: Record<string, string>
  now?: () => Date
  /**
   * Reuse a database (a restart, or a second instance on the same database);
   * by default a fresh one is made and dropped at close.
   */
  database?: TestDatabase
  /** PostgreSQL pool options, e.g. short timeouts for outage tests. */
  postgres?: PostgresOptions
  /** Slow-client bounds, shortened. */
  timeouts?: RequestTimeouts
}

/**
 * The service as `petstore serve` wires it (src/process/server.ts startServer), on a database of
 * its own, both listeners on free ports, its log lines kept for the test.
 * @example const server = await startTestServer({ backend: 'postgres', env: { RATE_LIMIT: '5' } })
 */
export async function startTestServer (options: StartOptions = {}): Promise<TestServer> {
  const database = options.database ?? await createTestDatabase(options.backend ?? 'sqlite')
  const config: Config = parseConfig({
    PETSTORE_API_KEYS: TEST_KEY,
    LOG_LEVEL: 'info',
    // Off: a test sends more than a minute's quota of requests on one key (the limit's own tests set it).
    RATE_LIMIT: '0',
    ...options.env,
    DATABASE_URL: database.url
  })
  const lines: string[] = []
  const logDestination = new Writable({
    write (chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter((line) => line !== ''))
      done()
    }
  })
  const { postgres, now, timeouts } = options
  const server = await startServer(config, { migrate: true, logDestination, postgres, now, timeouts, anyPorts: true })
  return {
    api: `${server.url}/v1`,
    origin: server.url,
    metrics: server.metrics!,
    app: server.app,
    store: server.store,
    database,
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    logText: () => lines.join('\n'),
    sweeps: server.sweeps,
    close: async () => {
      await server.close()
      if (options.database === undefined) await database.drop()
    }
  }
}

/**
 * The same database reached through another address (a proxy): `host:port` replaced.
 * Dropping it drops nothing; the original owns the database.
 * @example const viaProxy = throughAddress(database, '127.0.0.1', proxy.port)
 */
export function throughAddress (database: TestDatabase, host: string, port: number): TestDatabase {
  const url = new URL(database.url)
  url.hostname = host
  url.port = String(port)
  return { url: url.href, directUrl: database.directUrl, drop: async () => {} }
}

/** POSTs a JSON body (a string is sent as it is) with the test key. */
export async function post (server: TestServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(`${server.api}${path}`, {
    method: 'POST',
    headers: { ...JSON_AUTH, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body)
  })
}

/** GETs with the test key. */
export async function get (server: TestServer, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(`${server.api}${path}`, { headers: { ...AUTH, ...headers } })
}

/**
 * Resolves once `done()` holds, asked every 10 ms; throws past `timeoutMs`.
 * @example await until(() => store.waits.count() > 10, 10_000)
 */
export async function until (done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${done.toString()}`)
    await sleep(10)
  }
}

/** Asserts the spec's Error body, exactly, and returns it. */
export async function errorBody (response: Response): Promise<{ code: string, message: string, status: number }> {
  const text = await response.text()
  const body = JSON.parse(text) as { code: string, message: string, status: number }
  if (!response.headers.get('content-type')?.startsWith('application/json')) throw new Error(`not JSON: ${response.headers.get('content-type')}`)
  if (Object.keys(body).sort().join() !== 'code,message,status') throw new Error(`not the Error body: ${text}`)
  if (body.status !== response.status) throw new Error(`status ${body.status} in a ${response.status} response`)
  return body
}
