/**
 * A `pg` pool over libpq's address of several hosts (address.ts): each new connection
 * tries the hosts in order, each within the connect timeout, and keeps the first that
 * suits `target_session_attrs`, as libpq does. `pg` connects to one host only, so the
 * pool's client is a `pg.Client` per host tried, behind one object the pool sees.
 * After a write meets a read-only node (SQLSTATE 25006: an address still naming a
 * demoted primary), every connection opened until then is dropped, so the next
 * request connects afresh instead of meeting the same node again.
 */
import { EventEmitter } from 'node:events'
import pg from 'pg'
import { errorWords } from '../store-errors.js'
import type { DatabaseAddress, TargetSessionAttrs } from './address.js'

/** What a connected host is, as libpq's checks read it. */
interface HostState {
  /** pg_is_in_recovery(): a standby. */
  recovery: boolean
  /** transaction_read_only: no write would be taken. */
  readOnly: boolean
}

function suits (target: TargetSessionAttrs, state: HostState): boolean {
  switch (target) {
    case 'any': return true
    case 'read-write': return !state.readOnly
    case 'read-only': return state.readOnly
    case 'primary': return !state.recovery
    case 'standby': case 'prefer-standby': return state.recovery
  }
}

function describeState (state: HostState): string {
  return state.recovery ? 'a standby' : state.readOnly ? 'read-only' : 'a read-write primary'
}

/**
 * What a pool reads of a client to decide whether a released one may be reused: pg's private
 * `_queryable` and `_ending` (pg-pool's release, which marks them "to expose as a proper, public
 * interface"). Read here alone; test/store/postgres/host-list-pool.test.ts fails if pg changes them.
 * @example reusable(client) // { queryable: true, ending: false } for a connected client
 */
export function reusable (client: pg.Client | undefined): { queryable: boolean, ending: boolean } {
  const internals = client as unknown as { _queryable?: unknown, _ending?: unknown } | undefined
  return { queryable: internals?._queryable === true, ending: internals?._ending === true }
}

/** The connections of one pool, so a write refused as read-only can drop them all. */
class Connections {
  readonly open = new Set<HostListClient>()
  readonly checkedOut = new WeakSet<HostListClient>()

  dropAll (): void {
    for (const client of this.open) {
      // Checked out: dropped when released. Idle: an error is how a pool learns to discard one.
      if (this.checkedOut.has(client)) client.dropOnRelease = true
      else if (client.listenerCount('error') > 0) client.emit('error', new Error('a write met a read-only node: connection dropped'))
    }
    this.open.clear()
  }
}

const noop = (): void => {}

class HostListClient extends EventEmitter {
  /** Set when a write met a read-only node while this connection was open. */
  dropOnRelease = false
  readonly #config: pg.ClientConfig
  readonly #address: DatabaseAddress
  readonly #connections: Connections
  #client: pg.Client | undefined
  #trying: pg.Client | undefined
  #ending = false

  constructor (config: pg.ClientConfig, address: DatabaseAddress, connections: Connections, hostTimeoutMs: number) {
    super()
    this.#config = { ...config, connectionTimeoutMillis: hostTimeoutMs }
    this.#address = address
    this.#connections = connections
  }

  // The pool decides from these whether a released connection goes back to it (reusable).
  get _queryable (): boolean { return !this.dropOnRelease && reusable(this.#client).queryable }
  get _ending (): boolean { return this.#ending || reusable(this.#client).ending }

  connect (callback?: (err?: Error) => void): Promise<this> | undefined {
    const connected = this.#connectToAHost().then(() => this)
    if (callback === undefined) return connected
    connected.then(() => { callback() }, callback)
    return undefined
  }

  async #connectToAHost (): Promise<void> {
    const { hosts, target } = this.#address
    const reasons: string[] = []
    // prefer-standby: the first host that answered, taken when none is a standby.
    let fallback: pg.Client | undefined
    for (const host of hosts) {
      if (this.#ending) break
      const client = new pg.Client({ ...this.#config, connectionString: host.url })
      client.on('error', noop)
      this.#trying = client
      try {
        await client.connect()
        if (target === 'any') return this.#adopt(client)
        const state = await readState(client)
        if (suits(target, state)) {
          void fallback?.end().catch(noop)
          return this.#adopt(client)
        }
        if (target === 'prefer-standby' && fallback === undefined) {
          fallback = client
          continue
        }
        reasons.push(`${host.label}: ${describeState(state)}`)
        void client.end().catch(noop)
      } catch (err) {
        void client.end().catch(noop)
        // One host: its own error, as the driver gave it.
        if (hosts.length === 1) throw err
        reasons.push(`${host.label}: ${errorWords(err as Error)}`)
      }
    }
    if (fallback !== undefined && !this.#ending) return this.#adopt(fallback)
    void fallback?.end().catch(noop)
    if (this.#ending) throw new Error('Connection terminated')
    throw new Error(`no host suits target_session_attrs=${target} (${reasons.join('; ')})`)
  }

  #adopt (client: pg.Client): void {
    this.#client = client
    this.#trying = undefined
    client.removeListener('error', noop)
    client.on('error', (err: Error) => this.emit('error', err))
    client.on('notice', (notice: unknown) => this.emit('notice', notice))
    client.once('end', () => {
      this.#connections.open.delete(this)
      this.emit('end')
    })
    this.#connections.open.add(this)
  }

  isConnected (): boolean {
    return this.#client !== undefined
  }

  query (...args: unknown[]): unknown {
    const client = this.#client
    if (client === undefined) throw new Error('Client is not connected')
    // pg's overloads take no spread arguments: the pool calls with (text, values?, callback?) as pg.Client takes them.
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    const callback = args.at(-1)
    if (typeof callback === 'function') {
      return query(...args.slice(0, -1), (err: Error | undefined, result: unknown) => {
        this.#noteError(err)
        callback(err, result)
      })
    }
    // The store passes text and values, never a Submittable: pg answers with a promise.
    return (query(...args) as Promise<unknown>).catch((err: unknown) => {
      this.#noteError(err)
      throw err
    })
  }

  #noteError (err: unknown): void {
    if (err instanceof pg.DatabaseError && err.code === '25006') this.#connections.dropAll()
  }

  end (callback?: (err?: Error) => void): Promise<void> | undefined {
    this.#ending = true
    const ended = (this.#client ?? this.#trying)?.end() ?? Promise.resolve()
    if (callback === undefined) return ended
    ended.then(() => { callback() }, callback)
    return undefined
  }

  // pg.Client has ref and unref, which @types/pg leaves out; the pool calls them on idle clients.
  ref (): void { (this.#client as unknown as { ref?: () => void } | undefined)?.ref?.() }
  unref (): void { (this.#client as unknown as { unref?: () => void } | undefined)?.unref?.() }
}

async function readState (client: pg.Client): Promise<HostState> {
  // One statement: it passes a transaction-mode pooler, and costs one round trip per new connection.
  const { rows } = await client.query<{ recovery: boolean, read_only: string }>(
    "SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only")
  return { recovery: rows[0]!.recovery, readOnly: rows[0]!.read_only === 'on' }
}

export interface HostListPoolOptions extends Omit<pg.PoolConfig, 'connectionString' | 'connectionTimeoutMillis' | 'Client'> {
  /** libpq's connect timeout: per host tried. */
  connectTimeoutMs: number
}

/**
 * A pool whose every new connection settles on a host of `address` that suits its target.
 * A caller waits for a connection at most the connect timeout of every host.
 * @example const pool = hostListPool(parseAddress(url), { max: 10, connectTimeoutMs: 5_000 })
 */
export function hostListPool (address: DatabaseAddress, { connectTimeoutMs, ...options }: HostListPoolOptions): pg.Pool {
  const connections = new Connections()
  const Client = class extends HostListClient {
    constructor (config: pg.ClientConfig) {
      super(config, address, connections, connectTimeoutMs)
    }
  }
  const pool = new pg.Pool({
    ...options,
    connectionTimeoutMillis: connectTimeoutMs * address.hosts.length,
    // The pool only calls what HostListClient has of pg.Client (connect, query, end, events); @types/pg wants a ClientBase.
    Client: Client as unknown as new () => pg.ClientBase
  })
  // Every client of this pool is a HostListClient, which the pool's events type as pg's own.
  pool.on('acquire', (client) => { connections.checkedOut.add(client as unknown as HostListClient) })
  pool.on('release', (_err, client) => { connections.checkedOut.delete(client as unknown as HostListClient) })
  return pool
}
