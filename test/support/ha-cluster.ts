/**
 * A highly available PostgreSQL as production runs it, in a temporary folder on ports of its
 * own: etcd, two Patroni nodes (PostgreSQL 15, synchronous mode) and HAProxy in front (a
 * primary listener checked with Patroni's `/primary`, a standby listener with `/sync`), all
 * from Debian's packages. Never the shared PostgreSQL on 5432. PostgreSQL runs as `postgres`;
 * so does everything else, so the folder has one owner.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { accessSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import pg from 'pg'
import { stringify } from 'yaml'
import { startHaproxy, type Haproxy } from './haproxy.js'
import { ownChild, stopChild } from './programs.js'

const PG_BIN = '/usr/lib/postgresql/15/bin'
const TOOLS = ['/usr/bin/patroni', '/usr/bin/patronictl', '/usr/bin/etcd', '/usr/sbin/haproxy', `${PG_BIN}/postgres`]
/** Patroni's initdb refuses an empty superuser password; loopback only, so one for every role. */
const PASSWORD = 'petstore-ha'
const DATABASE = 'petstore'
const SCOPE = 'petstore-ha'
/** The first of the cluster's ports: etcd +0/+1, PostgreSQL +10/+11, Patroni's REST +20/+21, HAProxy +30 (primary), +31 (standby). */
const BASE_PORT_DEFAULT = 18600
/** The longest a failover leaves no primary (ttl 10 s, HAProxy's 1.5 s, a busy machine): the HA leg stays below it, a readiness probe outlasts it. */
export const FAILOVER_BOUND_MS = 20_000

export interface HaNode {
  name: string
  pgPort: number
  restPort: number
}

export interface HaCluster {
  /** HAProxy's primary listener (Patroni's `/primary` check), to the database `petstore`. */
  primaryUrl: string
  /** HAProxy's standby listener (Patroni's `/sync` check): the synchronous standby only. */
  standbyUrl: string
  /** Both nodes directly, libpq's multi-host form (`host1:port1,host2:port2`), no target_session_attrs. */
  multiHostUrl: string
  /** One node directly, as the superuser, to `database` (`petstore` unless given). */
  superuserUrl: (node: string, database?: string) => string
  nodes: HaNode[]
  /** The temporary folder: each daemon's log is `<name>.log` there. */
  dir: string
  /** The leader's name, once there is one (waits up to 60 s). */
  leader: () => Promise<string>
  /** `patronictl switchover` to the other node; resolves once it is the primary and the old leader its synchronous standby. */
  switchover: () => Promise<void>
  /** SIGKILLs the leader's Patroni and PostgreSQL, as its machine dying; resolves with its name once they are gone. */
  killLeader: () => Promise<string>
  /** SIGKILLs one node's Patroni and PostgreSQL. */
  killNode: (name: string) => Promise<void>
  /** Starts a killed node's Patroni again; resolves once it runs and the cluster has a primary and a synchronous standby (the killed leader rejoins as the standby once the other node was promoted). */
  restartNode: (name: string) => Promise<void>
  /** Stops one node's Patroni (which stops its PostgreSQL) and starts it again; resolves once the cluster has a primary and a synchronous standby again. */
  restartPatroni: (name: string) => Promise<void>
  /** Stops every daemon (and on failure kills it) and removes the folder. */
  stop: () => Promise<void>
}

/**
 * Why the cluster cannot run here, or false when it can.
 * @example const missing = haClusterMissing(); if (missing !== false) skippedFile(`HA tests skipped: ${missing}`)
 */
export function haClusterMissing (): string | false {
  const absent = TOOLS.filter((tool) => {
    try {
      accessSync(tool, constants.X_OK)
      return false
    } catch {
      return true
    }
  })
  if (absent.length > 0) return `${absent.join(', ')} missing (apt-get install patroni etcd-server etcd-client haproxy postgresql-15)`
  if (process.getuid?.() !== 0) return 'not root: PostgreSQL must run as postgres'
  return false
}

interface Daemon {
  child: ChildProcess
  exited: Promise<void>
}

/** Postmasters of nodes still up, by data folder: killed, as the daemons are (ownChild), if the test file ends first. */
const dataDirs = new Set<string>()
process.on('exit', () => {
  for (const dataDir of dataDirs) for (const pid of postgresPids(dataDir)) killQuietly(pid)
})

function killQuietly (pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal)
  } catch {}
}

/** The postmaster of `dataDir` (postmaster.pid's first line) and every child of it. */
function postgresPids (dataDir: string): number[] {
  let postmaster: number
  try {
    postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  } catch {
    return []
  }
  if (!Number.isInteger(postmaster) || postmaster <= 0) return []
  const children = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      // Fields after the command's closing parenthesis: state, ppid, …
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster
    } catch {
      return false
    }
  }).map(Number)
  return [postmaster, ...children]
}

async function restGet (port: number, path: string): Promise<Response | undefined> {
  try {
    return await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) })
  } catch {
    return undefined
  }
}

async function until (what: string, timeoutMs: number, check: () => Promise<boolean>, logs: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`HA cluster: ${what} not reached within ${timeoutMs / 1000} s\n${logs()}`)
    await sleep(200)
  }
}

async function runSql (url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/**
 * Starts etcd, two Patroni nodes and HAProxy, and resolves once one node is the primary, the
 * other its synchronous standby, both listeners answer and the database `petstore` exists.
 * @example const cluster = await startHaCluster(); try { … cluster.primaryUrl … } finally { await cluster.stop() }
 */
export async function startHaCluster (options: { basePort?: number } = {}): Promise<HaCluster> {
  const base = options.basePort ?? Number(process.env.HA_CLUSTER_BASE_PORT ?? BASE_PORT_DEFAULT)
  const uid = Number((await promisify(execFile)('id', ['-u', 'postgres'])).stdout)
  const gid = Number((await promisify(execFile)('id', ['-g', 'postgres'])).stdout)
  const dir = mkdtempSync(join(tmpdir(), 'petstore-ha-'))
  chownSync(dir, uid, gid)
  let haproxy: Haproxy | undefined
  const nodes: HaNode[] = [1, 2].map((n) => ({ name: `node${n}`, pgPort: base + 9 + n, restPort: base + 19 + n }))
  const etcdUrl = `http://127.0.0.1:${base}`
  const daemons = new Map<string, Daemon>()

  // HAProxy resets its check connections: Patroni logs a traceback for each, left out here.
  const logs = (): string => readdirSync(dir).filter((file) => file.endsWith('.log')).map((file) =>
    `--- ${file}\n${readFileSync(join(dir, file), 'utf8').split('\n').filter((line) => /^\d{4}-|^\[/.test(line)).slice(-25).join('\n')}`).join('\n')

  /** Runs `command` as postgres (setpriv execs it: the child is the daemon itself), its output to `<name>.log`. */
  function start (name: string, command: string, args: string[]): void {
    const log = openSync(join(dir, `${name}.log`), 'a')
    const child = spawn('setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', command, ...args], {
      cwd: dir,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: dir, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
      stdio: ['ignore', log, log]
    })
    closeSync(log)
    daemons.set(name, { child, exited: ownChild(child) })
  }

  function own (path: string): string {
    mkdirSync(path, { recursive: true, mode: 0o700 })
    chownSync(path, uid, gid)
    return path
  }

  function writeOwned (path: string, text: string): string {
    writeFileSync(path, text, { mode: 0o600 })
    chownSync(path, uid, gid)
    return path
  }

  const dataDir = (node: HaNode): string => join(dir, node.name, 'data')
  const patroniConfig = (node: HaNode): string => join(dir, `${node.name}.yml`)
  for (const node of nodes) {
    own(join(dir, node.name))
    writeOwned(patroniConfig(node), stringify({
      scope: SCOPE,
      namespace: '/service/',
      name: node.name,
      restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
      etcd3: { hosts: `127.0.0.1:${base}` },
      bootstrap: {
        dcs: {
          // A lost leader's key expires after ttl; ttl >= loop_wait + 2 × retry_timeout.
          ttl: 10,
          loop_wait: 1,
          retry_timeout: 4,
          maximum_lag_on_failover: 1_048_576,
          synchronous_mode: true,
          postgresql: {
            use_pg_rewind: true,
            use_slots: true,
            parameters: {
              wal_log_hints: 'on',
              max_connections: 100,
              shared_buffers: '32MB',
              // A killed process loses nothing the kernel holds; spares the shared disk.
              fsync: 'off'
            }
          }
        },
        initdb: [{ encoding: 'UTF8' }, 'data-checksums']
      },
      postgresql: {
        listen: `127.0.0.1:${node.pgPort}`,
        connect_address: `127.0.0.1:${node.pgPort}`,
        data_dir: dataDir(node),
        bin_dir: PG_BIN,
        pgpass: join(dir, node.name, 'pgpass'),
        authentication: {
          superuser: { username: 'postgres', password: PASSWORD },
          replication: { username: 'replicator', password: PASSWORD },
          rewind: { username: 'rewinder', password: PASSWORD }
        },
        parameters: { unix_socket_directories: join(dir, node.name) },
        pg_hba: [
          'local all all trust',
          'host replication replicator 127.0.0.1/32 scram-sha-256',
          'host all all 127.0.0.1/32 scram-sha-256'
        ]
      }
    }))
  }
  const haproxySections = [
    [
      'defaults',
      '  mode tcp',
      '  timeout connect 2s',
      '  timeout client 30m',
      '  timeout server 30m',
      '  timeout check 1s',
      // Checks every 500 ms; a node marked down has its sessions cut, so no client keeps talking to an old primary.
      '  default-server inter 500 fall 3 rise 2 on-marked-down shutdown-sessions'
    ],
    ...(['primary', 'sync'] as const).map((check, i) => [
      `listen ${check === 'primary' ? 'primary' : 'standby'}`,
      `  bind 127.0.0.1:${base + 30 + i}`,
      `  option httpchk GET /${check}`,
      '  http-check expect status 200',
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`)
    ])
  ]

  const url = (port: number, database = DATABASE, user = 'postgres'): string =>
    `postgres://${user}:${PASSWORD}@127.0.0.1:${port}/${database}`
  const node = (name: string): HaNode => {
    const found = nodes.find((candidate) => candidate.name === name)
    if (found === undefined) throw new Error(`HA cluster: no node ${name}`)
    return found
  }
  const other = (name: string): HaNode => nodes.find((candidate) => candidate.name !== name)!
  const answers = async (n: HaNode, path: string): Promise<boolean> => (await restGet(n.restPort, path))?.status === 200

  function startPatroni (n: HaNode): void {
    dataDirs.add(dataDir(n))
    start(n.name, '/usr/bin/patroni', [patroniConfig(n)])
  }

  /** One node the primary, the other its synchronous standby, as Patroni and HAProxy both see them. */
  async function settled (): Promise<boolean> {
    for (const n of nodes) {
      const standby = other(n.name)
      if (!await answers(n, '/primary') || !await answers(standby, '/sync')) continue
      const status = await haproxy?.status() ?? new Map<string, string>()
      return status.get(`primary/${n.name}`) === 'UP' && status.get(`primary/${standby.name}`) === 'DOWN' &&
        status.get(`standby/${standby.name}`) === 'UP' && status.get(`standby/${n.name}`) === 'DOWN'
    }
    return false
  }

  async function leader (): Promise<string> {
    let name: string | undefined
    await until('a leader', 60_000, async () => {
      for (const n of nodes) {
        const response = await restGet(n.restPort, '/cluster')
        if (response?.status !== 200) continue
        const { members } = await response.json() as { members: Array<{ name: string, role: string, state: string }> }
        name = members.find((member) => member.role === 'leader' && member.state === 'running')?.name
        if (name !== undefined) return true
      }
      return false
    }, logs)
    return name!
  }

  async function stopDaemon (name: string, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
    const daemon = daemons.get(name)
    if (daemon !== undefined) await stopChild(daemon.child, daemon.exited, signal, timeoutMs)
  }

  async function killNode (name: string): Promise<void> {
    const n = node(name)
    const daemon = daemons.get(name)
    daemon?.child.kill('SIGKILL')
    for (const pid of postgresPids(dataDir(n))) killQuietly(pid)
    await daemon?.exited
    await until(`${name}'s PostgreSQL gone`, 10_000, async () => postgresPids(dataDir(n)).every((pid) => !existsSync(`/proc/${pid}`)), logs)
  }

  async function stop (): Promise<void> {
    // Patroni stops its PostgreSQL on SIGTERM (a fast shutdown); whatever is left is killed.
    await Promise.all(nodes.map(async (n) => await stopDaemon(n.name, 'SIGTERM', 20_000)))
    for (const n of nodes) {
      for (const pid of postgresPids(dataDir(n))) killQuietly(pid)
      dataDirs.delete(dataDir(n))
    }
    await haproxy?.stop()
    await stopDaemon('etcd', 'SIGTERM', 5_000)
    rmSync(dir, { recursive: true, force: true })
  }

  try {
    start('etcd', '/usr/bin/etcd', [
      '--name', 'etcd1', '--data-dir', own(join(dir, 'etcd')),
      '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl,
      '--listen-peer-urls', `http://127.0.0.1:${base + 1}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${base + 1}`,
      '--initial-cluster', `etcd1=http://127.0.0.1:${base + 1}`, '--initial-cluster-state', 'new'
    ])
    await until('etcd', 30_000, async () => (await restGet(base, '/health'))?.status === 200, logs)
    startPatroni(nodes[0]!)
    await until('a first primary', 90_000, async () => await answers(nodes[0]!, '/primary'), logs)
    startPatroni(nodes[1]!)
    haproxy = await startHaproxy({ dir, sections: haproxySections, user: 'postgres' })
    await until('a synchronous standby', 120_000, settled, logs)
    await runSql(url(nodes[0]!.pgPort, 'postgres'), `CREATE DATABASE ${DATABASE}`)
    // A synchronous commit is flushed on the standby, not yet replayed there.
    await until('the database on the standby', 30_000, async () => await runSql(url(base + 31), 'SELECT 1').then(() => true, () => false), logs)
  } catch (err) {
    await stop()
    throw err
  }

  return {
    primaryUrl: url(base + 30),
    standbyUrl: url(base + 31),
    multiHostUrl: `postgres://postgres:${PASSWORD}@${nodes.map((n) => `127.0.0.1:${n.pgPort}`).join(',')}/${DATABASE}`,
    superuserUrl: (name, database = DATABASE) => url(node(name).pgPort, database),
    nodes,
    dir,
    leader,
    async switchover () {
      const from = await leader()
      const to = other(from).name
      await promisify(execFile)('/usr/bin/patronictl', ['-c', patroniConfig(node(to)), 'switchover', '--leader', from, '--candidate', to, '--force'], { timeout: 60_000 })
      await until(`${to} the primary`, 60_000, async () => await answers(node(to), '/primary') && await settled(), logs)
    },
    async killLeader () {
      const name = await leader()
      await killNode(name)
      return name
    },
    killNode,
    async restartNode (name) {
      startPatroni(node(name))
      await until(`${name} back`, 120_000, async () => await answers(node(name), '/health') && await settled(), logs)
    },
    async restartPatroni (name) {
      await stopDaemon(name, 'SIGTERM', 30_000)
      startPatroni(node(name))
      await until(`${name} back`, 120_000, async () => await answers(node(name), '/health') && await settled(), logs)
    },
    stop
  }
}
