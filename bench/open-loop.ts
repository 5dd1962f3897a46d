/**
 * The overload run's open-loop generator, a job at a time over IPC: arrivals at a fixed rate whatever the server does,
 * each on an idle keep-alive socket or a new one, over raw `net` (`node:http`'s agent costs more). Spare sockets and
 * one read buffer: against new sockets and 'data' events, 13-32 % less CPU, 3-5x fewer late sends.
 */
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { LoadSpec } from './load.js'

/** A job: `rate` arrivals a second for `seconds`. */
export interface LoadJob { origin: string, spec: LoadSpec, rate: number, seconds: number }

/** At most SOCKETS open at once; an answer DEADLINE_MS past its schedule is a timeout; a send LATE_MS past it, late. */
const SOCKETS = 10_000
const DEADLINE_MS = 1000
const LATE_MS = 5

/** What the generator saw of a job: runJob's counts. */
export type LoadOutcome = Awaited<ReturnType<typeof runJob>>

/** A socket, the schedule of the request it waits on (none: idle), the part of its answer read so far. */
interface Conn { socket: Socket, scheduled?: number, buffer?: Buffer }

// Every socket reads into this one buffer and answers are parsed there: a read leaves nothing to collect.
const READ_BUFFER = Buffer.alloc(65_536)

/** Runs one job to its end: its arrivals sent, each answered or, past the deadline, reset. */
async function runJob ({ origin, spec, rate, seconds }: LoadJob) {
  const { hostname, port } = new URL(origin)
  const request = Buffer.from(`${spec.method} ${spec.path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
    Object.entries(spec.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    (spec.body === undefined ? '\r\n' : `content-length: ${Buffer.byteLength(spec.body)}\r\n\r\n${spec.body}`))
  // 2xx in time, 503s, other answers, timeouts (socket reset), socket errors; late: sent past LATE_MS, or never.
  const out = { arrivals: 0, good: 0, refused: 0, other: 0, timeouts: 0, errors: 0, late: 0 }
  const refusedMs: number[] = []
  // Each send's socket and schedule, in the order of their deadlines, read from a head index; a job's arrivals fit.
  const sends: Array<[Conn, number]> = []
  let head = 0
  // The sockets in use, connected or connecting, and those of them idle.
  const open = new Set<Conn>()
  const idle: Conn[] = []
  const start = performance.now() + 20
  const due = (arrival: number): number => start + arrival * 1000 / rate

  function settle (conn: Conn, answer: 'good' | 'refused' | 'other' | 'timeouts' | 'errors', now: number): void {
    const latency = now - conn.scheduled!
    // An answer after the deadline (read before this tick's timeouts) is a timeout all the same.
    const outcome = answer !== 'errors' && latency > DEADLINE_MS ? 'timeouts' : answer
    out[outcome]++
    if (outcome === 'refused') refusedMs.push(latency)
    conn.scheduled = undefined
    conn.buffer = undefined
  }

  function discard (conn: Conn, reset: boolean): void {
    if (!open.delete(conn)) return
    if (idle.includes(conn)) idle.splice(idle.indexOf(conn), 1)
    // A reset waits for the connection (its SYN may lie in a full accept queue for seconds): destroyed at once.
    if (reset && !conn.socket.connecting) conn.socket.resetAndDestroy()
    else conn.socket.destroy()
  }

  /** An answer's bytes, in the shared buffer: parsed there, copied only while incomplete. True: read on. */
  function onData (conn: Conn, chunk: Buffer): boolean {
    if (conn.scheduled === undefined) return true
    const buffer = conn.buffer === undefined ? chunk : Buffer.concat([conn.buffer, chunk])
    const headEnd = buffer.indexOf('\r\n\r\n')
    const head = headEnd === -1 ? '' : buffer.toString('latin1', 0, headEnd)
    // Every subject answers with a content-length (the service, HAProxy's 503 file): a chunked answer reads as failed.
    if (headEnd === -1 || buffer.length < headEnd + 4 + Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)) {
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
    const spared = spare.pop()
    spared?.socket.connect(Number(port), hostname)
    if (spared !== undefined) return spared
    const callback = (bytes: number, buffer: Uint8Array): boolean => onData(conn, (buffer as Buffer).subarray(0, bytes))
    const socket = connect({ host: hostname, port: Number(port), onread: { buffer: READ_BUFFER, callback } })
    const conn: Conn = { socket }
    socket.on('connect', () => { if (conn.scheduled !== undefined) socket.write(request) })
    socket.on('error', () => {})
    socket.on('close', () => {
      if (conn.scheduled !== undefined) settle(conn, 'errors', performance.now())
      discard(conn, false)
      spare.push(conn)
      pump(performance.now())
    })
    return conn
  }

  /** Sends the arrivals due by `now`, each on an idle socket or a new one; called on each answer too. */
  function pump (now: number): void {
    for (; out.arrivals < Math.round(seconds * rate) && due(out.arrivals) <= now; out.arrivals++) {
      const scheduled = due(out.arrivals)
      const conn = idle.pop() ?? (open.size < SOCKETS ? newConn() : undefined)
      // Never sent, every socket in use: late, and a timeout.
      if (conn === undefined || now - scheduled > LATE_MS) out.late++
      if (conn === undefined) {
        out.timeouts++
        continue
      }
      open.add(conn)
      conn.scheduled = scheduled
      sends.push([conn, scheduled])
      // A connecting socket sends on 'connect': no write left pending in a socket reset before it connects.
      if (!conn.socket.connecting) conn.socket.write(request)
    }
  }

  // A tick sends what is due, then times out the sends past their deadline: at most 2 ms of resets, sends first.
  for (;;) {
    const now = performance.now()
    pump(now)
    for (const began = performance.now(); head < sends.length && performance.now() - began < 2; head++) {
      const [conn, scheduled] = sends[head]!
      // Settled already, or a later send on the same socket.
      if (conn.scheduled !== scheduled) continue
      if (scheduled + DEADLINE_MS > now) break
      settle(conn, 'timeouts', now)
      discard(conn, true)
    }
    if (now >= start + seconds * 1000 && head === sends.length) break
    await sleep(1)
  }
  for (const conn of [...idle]) discard(conn, false)
  refusedMs.sort((a, b) => a - b)
  return { ...out, refusedP99Ms: refusedMs.length === 0 ? null : refusedMs[Math.ceil(refusedMs.length * 0.99) - 1]! }
}

// One job a message, its outcome the answer; the process ends when the bench disconnects.
process.on('message', (job: LoadJob) => { void runJob(job).then((outcome) => process.send!(outcome)) })
