/**
 * The overload run's open-loop generator, a job at a time over IPC: arrivals at a fixed rate whatever the server does,
 * each on an idle keep-alive socket or a new one, over raw `net` (`node:http`'s agent costs more). Spare sockets and
 * one read buffer: against new sockets and 'data' events, 13-32 % less CPU, 3-5x fewer late sends.
 */
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LoadSpec } from './load.js'

/** A job: `rate` arrivals a second for `seconds`, on at most `sockets` sockets at once. */
export interface LoadJob {
  origin: string, spec: LoadSpec, rate: number, sockets: number, seconds: number, deadlineMs: number, lateMs: number
}

/** What the generator saw of a job: runJob's counts. */
export type LoadOutcome = Awaited<ReturnType<typeof runJob>>

/** A request sent, and the socket it waits on. */
interface Send { conn: Conn, scheduled: number }
/** A socket, the send it carries (none: idle, or settled), the part of the answer read so far. */
interface Conn { socket: Socket, send?: Send, buffer?: Buffer }

// Every socket reads into this one buffer and answers are parsed there: a read leaves nothing to collect.
const READ_BUFFER = Buffer.alloc(65_536)

/** Runs one job to its end: its arrivals sent, each answered or, not in `deadlineMs` after its schedule, reset. */
async function runJob (job: LoadJob) {
  const { hostname, port } = new URL(job.origin)
  const { spec, deadlineMs } = job
  const request = Buffer.from(`${spec.method} ${spec.path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
    Object.entries(spec.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    (spec.body === undefined ? '\r\n' : `content-length: ${Buffer.byteLength(spec.body)}\r\n\r\n${spec.body}`))
  const interval = 1000 / job.rate
  const total = Math.round(job.seconds * job.rate)
  // 2xx in time, 503s, other answers, timeouts (socket reset), socket errors; late: sent past lateMs, or never.
  const out = { arrivals: 0, good: 0, refused: 0, other: 0, timeouts: 0, errors: 0, late: 0 }
  const refusedMs: number[] = []
  // In the order of their schedules, so of their deadlines, read from a head index; a job's arrivals fit.
  const sends: Send[] = []
  let head = 0
  // The sockets in use, connected or connecting, and those of them idle.
  const open = new Set<Conn>()
  const idle: Conn[] = []
  const start = performance.now() + 20
  const end = start + job.seconds * 1000

  function settle (conn: Conn, answer: 'good' | 'refused' | 'other' | 'timeouts' | 'errors', now: number): void {
    const latency = now - conn.send!.scheduled
    // An answer after the deadline (read before this tick's timeouts) is a timeout all the same.
    const outcome = answer !== 'errors' && latency > deadlineMs ? 'timeouts' : answer
    out[outcome]++
    if (outcome === 'refused') refusedMs.push(latency)
    conn.send = undefined
    conn.buffer = undefined
  }

  /** Takes a socket out of use, once. */
  function discard (conn: Conn, reset: boolean): void {
    if (!open.delete(conn)) return
    if (idle.includes(conn)) idle.splice(idle.indexOf(conn), 1)
    // A reset waits for the connection (its SYN may lie in a full accept queue for seconds): destroyed at once.
    if (reset && !conn.socket.connecting) conn.socket.resetAndDestroy()
    else conn.socket.destroy()
  }

  /** An answer's bytes, in the shared buffer: parsed there, copied only while incomplete. True: read on. */
  function onData (conn: Conn, chunk: Buffer): boolean {
    if (conn.send === undefined) return true
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

  // Closed sockets, connected again when one is needed: a Socket is costly to build and to collect.
  const spare: Conn[] = []
  function newConn (): Conn {
    const reused = spare.pop()
    if (reused !== undefined) {
      open.add(reused)
      reused.socket.connect(Number(port), hostname)
      return reused
    }
    const callback = (bytes: number, buffer: Uint8Array): boolean => onData(conn, (buffer as Buffer).subarray(0, bytes))
    const socket = connect({ host: hostname, port: Number(port), onread: { buffer: READ_BUFFER, callback } })
    const conn: Conn = { socket }
    open.add(conn)
    socket.on('connect', () => { if (conn.send !== undefined) socket.write(request) })
    socket.on('error', () => {})
    socket.on('close', () => {
      if (conn.send !== undefined) settle(conn, 'errors', performance.now())
      discard(conn, false)
      spare.push(conn)
      pump(performance.now())
    })
    return conn
  }

  /** Sends the arrivals due by `now`, each on an idle socket or a new one; called on each answer too. */
  function pump (now: number): void {
    for (; out.arrivals < total && start + out.arrivals * interval <= now; out.arrivals++) {
      const scheduled = start + out.arrivals * interval
      const conn = idle.pop() ?? (open.size < job.sockets ? newConn() : undefined)
      // Late past lateMs; never sent, every socket the job may open in use: late, and a timeout.
      if (conn === undefined || now - scheduled > job.lateMs) out.late++
      if (conn === undefined) {
        out.timeouts++
        continue
      }
      conn.send = { conn, scheduled }
      sends.push(conn.send)
      // A connecting socket sends on 'connect': no write left pending in a socket reset before it connects.
      if (!conn.socket.connecting) conn.socket.write(request)
    }
  }

  // A tick sends what is due, then times out the sends past their deadline: at most 2 ms of resets, sends first.
  for (;;) {
    const now = performance.now()
    pump(now)
    for (const began = performance.now(); head < sends.length && performance.now() - began < 2; head++) {
      const send = sends[head]!
      if (send.conn.send !== send) continue
      if (send.scheduled + deadlineMs > now) break
      settle(send.conn, 'timeouts', now)
      discard(send.conn, true)
    }
    if (now >= end && head === sends.length) break
    await sleep(1)
  }
  for (const conn of [...idle]) discard(conn, false)
  refusedMs.sort((a, b) => a - b)
  return { ...out, refusedP99Ms: refusedMs.length === 0 ? null : refusedMs[Math.ceil(refusedMs.length * 0.99) - 1]! }
}

// One job a message, its outcome the answer; the process ends when the bench disconnects.
process.on('message', (job: LoadJob) => { void runJob(job).then((outcome) => process.send!(outcome)) })
