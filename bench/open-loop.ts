/**
 * The open-loop load process of the overload run, started once and given one job at a time over
 * IPC (so its code is compiled and its heap grown before the runs that count): arrivals at a fixed
 * rate whatever the server does, each sent on an idle keep-alive socket or a new one, up to
 * `sockets`. Latency counts from the scheduled arrival; a request not answered within `deadlineMs`
 * is a timeout and its socket is reset. Raw `net` sockets and a minimal HTTP/1.1 reader, by hand:
 * autocannon is closed loop, and `node:http`'s agent costs more a request.
 */
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { noOutcome, type LoadJob, type LoadOutcome } from './load.js'

interface Conn { socket: Socket, seq: number, scheduled: number, buffer: Buffer | undefined }

const p99 = (values: number[]): number | null =>
  values.length === 0 ? null : values.sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1]!
/** The second field of /proc/self/schedstat: nanoseconds runnable, waiting for a CPU (0 where there is none). */
const waitedNs = (): number => {
  try { return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) } catch { return 0 }
}

const READ_BUFFER = Buffer.alloc(65_536)

/** Runs one job to its end: its arrivals sent, each answered or timed out. */
async function runJob (job: LoadJob): Promise<LoadOutcome> {
  const { hostname, port } = new URL(job.origin)
  const { spec } = job
  const request = Buffer.from(`${spec.method} ${spec.path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
    Object.entries(spec.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    (spec.body === undefined ? '\r\n' : `content-length: ${Buffer.byteLength(spec.body)}\r\n\r\n${spec.body}`))
  const interval = 1000 / job.rate
  const total = Math.round(job.seconds * job.rate)
  const goodMs: number[] = []
  const refusedMs: number[] = []
  const out = noOutcome()
  // FIFO queues as arrays with a head index: arrivals waiting for a socket, and sends in order of
  // deadline (parallel arrays: no object a request to outlive the young generation).
  const waiting: number[] = []
  let waitingHead = 0
  const sentConn: Conn[] = []
  const sentSeq: number[] = []
  let sentHead = 0
  const idle: Conn[] = []
  // Closed sockets, connected again when one is needed: a Socket is costly to build and to collect.
  const spare: Conn[] = []
  let open = 0
  let seq = 0
  const cpuStart = process.cpuUsage()
  const waitedStart = waitedNs()
  const start = performance.now() + 20
  const end = start + job.seconds * 1000

  function settle (conn: Conn, answer: 'good' | 'refused' | 'other' | 'timeouts' | 'errors', now: number): void {
    const latency = now - conn.scheduled
    // An answer after the deadline (read before this tick's expire) is a timeout all the same.
    const outcome = answer !== 'errors' && latency > job.deadlineMs ? 'timeouts' : answer
    out[outcome]++
    if (outcome === 'good') goodMs.push(latency)
    else if (outcome === 'refused') refusedMs.push(latency)
    conn.seq = 0
    conn.buffer = undefined
  }

  function drop (conn: Conn): void {
    open--
    const at = idle.indexOf(conn)
    if (at !== -1) idle.splice(at, 1)
  }

  /** An answer's bytes, read into the shared buffer: parsed there, copied only when the answer is incomplete. */
  function onData (conn: Conn, chunk: Buffer): void {
    if (conn.seq <= 0) return
    const buffer = conn.buffer === undefined ? chunk : Buffer.concat([conn.buffer, chunk])
    conn.buffer = undefined
    const headEnd = buffer.indexOf('\r\n\r\n')
    if (headEnd === -1) { conn.buffer = Buffer.from(buffer); return }
    const head = buffer.toString('latin1', 0, headEnd)
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    const incomplete = length !== null
      ? buffer.length < headEnd + 4 + Number(length[1])
      : /\r\ntransfer-encoding: *chunked/i.test(head) && buffer.indexOf('\r\n0\r\n\r\n', headEnd) === -1
    if (incomplete) { conn.buffer = Buffer.from(buffer); return }
    const now = performance.now()
    const status = Number(head.slice(9, 12))
    settle(conn, status >= 200 && status < 300 ? 'good' : status === 503 ? 'refused' : 'other', now)
    if (/\r\nconnection: *close/i.test(head)) {
      drop(conn)
      conn.seq = -1
      conn.socket.destroy()
    } else {
      idle.push(conn)
    }
    pump(now)
  }

  function newConn (): Conn {
    open++
    const reused = spare.pop()
    if (reused !== undefined) {
      reused.socket.connect(Number(port), hostname)
      return reused
    }
    const conn: Conn = { socket: undefined as unknown as Socket, seq: 0, scheduled: 0, buffer: undefined }
    // Read into one buffer for all sockets (answers are parsed as they come): no memory to collect a read.
    const callback = (bytes: number, buffer: Uint8Array): boolean => {
      onData(conn, (buffer as Buffer).subarray(0, bytes))
      return true
    }
    const socket = connect({ host: hostname, port: Number(port), onread: { buffer: READ_BUFFER, callback } })
    conn.socket = socket
    socket.on('connect', () => { if (conn.seq > 0) socket.write(request) })
    socket.on('error', () => {})
    socket.on('close', () => {
      // seq: > 0 a request in flight, 0 idle, -1 already dropped.
      if (conn.seq > 0) settle(conn, 'errors', performance.now())
      if (conn.seq !== -1) drop(conn)
      conn.seq = 0
      spare.push(conn)
      pump(performance.now())
    })
    return conn
  }

  /**
   * Queues the arrivals due by `now` and sends those waiting, oldest first, while a socket is idle
   * or one may be opened. Called on every answer too, so a burst of answers delays no send.
   */
  function pump (now: number): void {
    while (out.arrivals < total && start + out.arrivals * interval <= now) {
      waiting.push(start + out.arrivals * interval)
      out.arrivals++
    }
    while (waitingHead < waiting.length && (idle.length > 0 || open < job.sockets)) {
      const scheduled = waiting[waitingHead++]!
      // Past its deadline while it waited: the client gave up, unsent (a late send too).
      if (scheduled + job.deadlineMs <= now) { out.timeouts++; out.late++; continue }
      const conn = idle.pop() ?? newConn()
      if (now - scheduled > job.lateMs) out.late++
      conn.seq = ++seq
      conn.scheduled = scheduled
      sentConn.push(conn)
      sentSeq.push(conn.seq)
      // A connecting socket sends on 'connect': no write left pending in a socket reset before it
      // connects, then used again.
      if (!conn.socket.connecting) conn.socket.write(request)
    }
  }

  /**
   * Times out what passed its deadline: in flight (its socket reset, a new one opened on demand)
   * or still waiting for a socket. Resets take at most 2 ms a tick, the rest the next: sends come
   * first (a request answered meanwhile is still a timeout, by its latency).
   */
  function expire (now: number): void {
    // Sends leave in the order of their schedules, so of their deadlines; a settled one is skipped.
    const began = performance.now()
    for (; sentHead < sentConn.length && performance.now() - began < 2; sentHead++) {
      const conn = sentConn[sentHead]!
      if (conn.seq !== sentSeq[sentHead]) continue
      if (conn.scheduled + job.deadlineMs > now) break
      settle(conn, 'timeouts', now)
      drop(conn)
      conn.seq = -1
      // A reset waits for the connection (its SYN may lie in a full accept queue for seconds): destroyed at once.
      if (conn.socket.connecting) conn.socket.destroy()
      else conn.socket.resetAndDestroy()
    }
    while (waitingHead < waiting.length && waiting[waitingHead]! + job.deadlineMs <= now) {
      // Never sent: a late send too.
      waitingHead++
      out.timeouts++
      out.late++
    }
    if (sentHead > 4096) { sentConn.splice(0, sentHead); sentSeq.splice(0, sentHead); sentHead = 0 }
    if (waitingHead > 4096) { waiting.splice(0, waitingHead); waitingHead = 0 }
  }

  return await new Promise((resolve) => {
    const tick = (): void => {
      const now = performance.now()
      pump(now)
      expire(now)
      if (now < end || waitingHead < waiting.length || sentHead < sentConn.length) {
        setTimeout(tick, 1)
        return
      }
      const cpu = process.cpuUsage(cpuStart)
      out.cpuSeconds = (cpu.user + cpu.system) / 1e6
      out.waitedMs = (waitedNs() - waitedStart) / 1e6
      out.goodP99Ms = p99(goodMs)
      out.refusedP99Ms = p99(refusedMs)
      for (const conn of idle.splice(0)) { conn.seq = -1; conn.socket.destroy() }
      resolve(out)
    }
    tick()
  })
}

// One job a message, its outcome the answer; the process ends when the bench disconnects.
process.on('message', (job: LoadJob) => { void runJob(job).then((outcome) => process.send!(outcome)) })
