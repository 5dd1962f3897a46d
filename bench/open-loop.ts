/**
 * The overload run's open-loop generator, given a job at a time over IPC: arrivals at a fixed rate whatever the
 * server does, each on an idle keep-alive socket or a new one; an answer not in within `deadlineMs` of its schedule
 * is a timeout, its socket reset. Raw `net` and a minimal HTTP/1.1 reader: `node:http`'s agent costs more.
 */
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { noOutcome, type LoadJob, type LoadOutcome } from './load.js'

/** `seq`: > 0 a request in flight, 0 idle, -1 discarded. */
interface Conn { socket: Socket, seq: number, scheduled: number, buffer: Buffer | undefined }

const p99 = (values: number[]): number | null =>
  values.length === 0 ? null : values.sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1]!

// Every socket reads into this one buffer and answers are parsed there: a read leaves nothing to collect.
const READ_BUFFER = Buffer.alloc(65_536)

/** Runs one job to its end: its arrivals sent, each answered or timed out. */
async function runJob (job: LoadJob): Promise<LoadOutcome> {
  const { hostname, port } = new URL(job.origin)
  const { spec, deadlineMs } = job
  const request = Buffer.from(`${spec.method} ${spec.path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
    Object.entries(spec.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    (spec.body === undefined ? '\r\n' : `content-length: ${Buffer.byteLength(spec.body)}\r\n\r\n${spec.body}`))
  const interval = 1000 / job.rate
  const total = Math.round(job.seconds * job.rate)
  const out = noOutcome()
  const refusedMs: number[] = []
  // Sends in order of deadline, read from a head index (parallel arrays: no object a request outlives the young
  // generation), never trimmed: a job's arrivals fit.
  const sentConn: Conn[] = []
  const sentSeq: number[] = []
  let sentHead = 0
  const idle: Conn[] = []
  // Closed sockets, connected again when one is needed: a Socket is costly to build and to collect.
  const spare: Conn[] = []
  let open = 0
  let seq = 0
  const start = performance.now() + 20
  const end = start + job.seconds * 1000

  function settle (conn: Conn, answer: 'good' | 'refused' | 'other' | 'timeouts' | 'errors', now: number): void {
    const latency = now - conn.scheduled
    // An answer after the deadline (read before this tick's timeouts) is a timeout all the same.
    const outcome = answer !== 'errors' && latency > deadlineMs ? 'timeouts' : answer
    out[outcome]++
    if (outcome === 'refused') refusedMs.push(latency)
    conn.seq = 0
    conn.buffer = undefined
  }

  /** Takes a socket out of use; its 'close' makes it a spare. */
  function discard (conn: Conn, reset: boolean): void {
    open--
    const at = idle.indexOf(conn)
    if (at !== -1) idle.splice(at, 1)
    conn.seq = -1
    // A reset waits for the connection (its SYN may lie in a full accept queue for seconds): destroyed at once.
    if (reset && !conn.socket.connecting) conn.socket.resetAndDestroy()
    else conn.socket.destroy()
  }

  /** An answer's bytes, in the shared buffer: parsed there, copied only while incomplete. True: read on. */
  function onData (conn: Conn, chunk: Buffer): boolean {
    if (conn.seq <= 0) return true
    const buffer = conn.buffer === undefined ? chunk : Buffer.concat([conn.buffer, chunk])
    const headEnd = buffer.indexOf('\r\n\r\n')
    const head = headEnd === -1 ? '' : buffer.toString('latin1', 0, headEnd)
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    const complete = headEnd !== -1 && (length !== null
      ? buffer.length >= headEnd + 4 + Number(length[1])
      : !/\r\ntransfer-encoding: *chunked/i.test(head) || buffer.includes('\r\n0\r\n\r\n', headEnd))
    if (!complete) {
      conn.buffer = Buffer.from(buffer)
      return true
    }
    const now = performance.now()
    const status = Number(head.slice(9, 12))
    settle(conn, status >= 200 && status < 300 ? 'good' : status === 503 ? 'refused' : 'other', now)
    if (/\r\nconnection: *close/i.test(head)) discard(conn, false)
    else idle.push(conn)
    pump(now)
    return true
  }

  function newConn (): Conn {
    open++
    const reused = spare.pop()
    if (reused !== undefined) {
      reused.socket.connect(Number(port), hostname)
      return reused
    }
    const conn: Conn = { socket: undefined as unknown as Socket, seq: 0, scheduled: 0, buffer: undefined }
    const callback = (bytes: number, buffer: Uint8Array): boolean => onData(conn, (buffer as Buffer).subarray(0, bytes))
    const socket = connect({ host: hostname, port: Number(port), onread: { buffer: READ_BUFFER, callback } })
    conn.socket = socket
    socket.on('connect', () => { if (conn.seq > 0) socket.write(request) })
    socket.on('error', () => {})
    socket.on('close', () => {
      if (conn.seq > 0) settle(conn, 'errors', performance.now())
      if (conn.seq !== -1) discard(conn, false)
      conn.seq = 0
      spare.push(conn)
      pump(performance.now())
    })
    return conn
  }

  /** Sends the arrivals due by `now`, each on an idle socket or a new one; called on each answer too. */
  function pump (now: number): void {
    for (; out.arrivals < total && start + out.arrivals * interval <= now; out.arrivals++) {
      const scheduled = start + out.arrivals * interval
      const conn = idle.pop() ?? (open < job.sockets ? newConn() : undefined)
      // Late past lateMs; never sent, every socket the job may open in use: late, and a timeout.
      if (conn === undefined || now - scheduled > job.lateMs) out.late++
      if (conn === undefined) {
        out.timeouts++
        continue
      }
      conn.scheduled = scheduled
      conn.seq = ++seq
      sentConn.push(conn)
      sentSeq.push(conn.seq)
      // A connecting socket sends on 'connect': no write left pending in a socket reset before it connects.
      if (!conn.socket.connecting) conn.socket.write(request)
    }
  }

  // A tick sends what is due, then times out the sends past their deadline: at most 2 ms of resets, sends first.
  for (;;) {
    const now = performance.now()
    pump(now)
    // Sends leave in the order of their schedules, so of their deadlines; a settled one is skipped.
    for (const began = performance.now(); sentHead < sentConn.length && performance.now() - began < 2; sentHead++) {
      const conn = sentConn[sentHead]!
      if (conn.seq !== sentSeq[sentHead]) continue
      if (conn.scheduled + deadlineMs > now) break
      settle(conn, 'timeouts', now)
      discard(conn, true)
    }
    if (now >= end && sentHead === sentConn.length) break
    await sleep(1)
  }
  out.refusedP99Ms = p99(refusedMs)
  for (const conn of [...idle]) discard(conn, false)
  return out
}

// One job a message, its outcome the answer; the process ends when the bench disconnects.
process.on('message', (job: LoadJob) => { void runJob(job).then((outcome) => process.send!(outcome)) })
