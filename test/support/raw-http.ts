/**
 * Raw HTTP/1.1 over a socket, for what fetch cannot send: a body sent slowly,
 * malformed request lines, duplicate headers, a request that never ends.
 */
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { TEST_KEY } from './constants.js'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Parses the first response in `text` (Content-Length or until close). */
export function parseResponse (text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n')
  const head = end === -1 ? text : text.slice(0, end)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = end === -1 ? '' : text.slice(end + 4)
  if (headers['content-length'] !== undefined) body = Buffer.from(body).subarray(0, Number(headers['content-length'])).toString()
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

/** A connection to the server on which the test writes by hand. */
export interface RawConnection {
  socket: Socket
  write: (chunk: string | Buffer) => void
  /** Resolves with the response once the server has sent a complete one or closed the connection. */
  response: Promise<RawResponse>
}

/**
 * `bodyless`: the response ends with its headers, as a response to HEAD does whatever its Content-Length.
 * @example const conn = await openRaw(server.origin); conn.write('GET / HTTP/1.1\r\n…'); const res = await conn.response
 */
export async function openRaw (origin: string, { bodyless = false } = {}): Promise<RawConnection> {
  const { hostname, port } = new URL(origin)
  const socket = connect(Number(port), hostname)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  const chunks: Buffer[] = []
  const response = new Promise<RawResponse>((resolve) => {
    const settle = (): void => resolve(parseResponse(Buffer.concat(chunks).toString()))
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      const text = Buffer.concat(chunks).toString()
      const end = text.indexOf('\r\n\r\n')
      if (end === -1) return
      const parsed = parseResponse(text)
      const length = parsed.headers['content-length']
      if (bodyless || (length !== undefined && Buffer.byteLength(text.slice(end + 4)) >= Number(length))) {
        socket.destroy()
        resolve(parsed)
      }
    })
    socket.on('close', settle)
    socket.on('error', () => {})
  })
  return { socket, write: (chunk) => socket.write(chunk), response }
}

/** A create in flight: its headers and half its body sent, the rest held back. */
export interface HalfSentCreate {
  /** Sends the rest of the body; resolves with the answer. */
  finish: () => Promise<RawResponse>
  /** Closes the connection mid-body, as a client that dies does. */
  abandon: () => void
}

/**
 * POST /v1/pets with the test key and a JSON body (a string is sent as it is), stopped halfway
 * through the body: the request is in flight (its Idempotency-Key, if given, held) until finish()
 * or abandon().
 * @example const slow = await startHalfSentCreate(server.origin, { name: 'Rex', categoryId: 1 }, 'k1'); …; assert.equal((await slow.finish()).status, 201)
 */
export async function startHalfSentCreate (origin: string, pet: unknown, idempotencyKey?: string): Promise<HalfSentCreate> {
  const body = typeof pet === 'string' ? pet : JSON.stringify(pet)
  const conn = await openRaw(origin)
  const half = Math.floor(body.length / 2)
  const keyLine = idempotencyKey === undefined ? '' : `Idempotency-Key: ${idempotencyKey}\r\n`
  conn.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\n${keyLine}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`)
  // Time for the server to read the headers and take the request in, on a busy machine too.
  await sleep(200)
  return {
    finish: async () => {
      conn.write(body.slice(half))
      return await conn.response
    },
    abandon: () => conn.socket.destroy()
  }
}

/** Sends `text` as it is and waits for the answer (to a HEAD, its headers: no body follows, and the connection stays open). */
export async function rawRequest (origin: string, text: string | Buffer): Promise<RawResponse> {
  const conn = await openRaw(origin, { bodyless: (typeof text === 'string' ? text : text.toString('latin1', 0, 5)).startsWith('HEAD ') })
  conn.write(text)
  return await conn.response
}
