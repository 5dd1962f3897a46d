/**
 * Idle keep-alive connections are kept KEEP_ALIVE_TIMEOUT seconds, longer than a load balancer in
 * front keeps its own side open, so that it never sends a request on a connection the service is
 * closing at that moment (docs/deployment.md#behind-a-load-balancer). Watched on a raw socket.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseConfig } from '../../src/config.js'
import { TEST_KEY } from '../support/constants.js'
import { startTestServer, type TestServer } from '../support/helper.js'

const REQUEST = `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`

/** A keep-alive connection on which each `send()` resolves with the response's head once its body is in. */
async function keptAlive (origin: string): Promise<{ socket: Socket, send: () => Promise<string>, closed: Promise<number> }> {
  const { hostname, port } = new URL(origin)
  const socket = connect(Number(port), hostname)
  await once(socket, 'connect')
  let received = ''
  let answered: ((head: string) => void) | undefined
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk
    const end = received.indexOf('\r\n\r\n')
    const length = /content-length: (\d+)/i.exec(received.slice(0, end))?.[1]
    if (end === -1 || length === undefined || received.length < end + 4 + Number(length)) return
    answered?.(received.slice(0, end))
    received = received.slice(end + 4 + Number(length))
  })
  const closed = new Promise<number>((resolve) => socket.once('close', () => { resolve(performance.now()) }))
  return {
    socket,
    closed,
    send: async () => await new Promise<string>((resolve) => {
      answered = resolve
      socket.write(REQUEST)
    })
  }
}

describe('idle keep-alive connections', () => {
  let server: TestServer
  before(async () => { server = await startTestServer({ env: { KEEP_ALIVE_TIMEOUT: '3' } }) })
  after(async () => { await server.close() })

  it('stay open through KEEP_ALIVE_TIMEOUT idle, and are closed within the 2 s after it', { timeout: 20_000 }, async () => {
    const connection = await keptAlive(server.origin)
    try {
      assert.match(await connection.send(), /^keep-alive: timeout=3$/im)
      await sleep(2_800)
      assert.match(await connection.send(), /^HTTP\/1\.1 200 /, 'still open after 2.8 s idle')
      const idleFrom = performance.now()
      const idleMs = await connection.closed - idleFrom
      assert.ok(idleMs >= 3_000 && idleMs < 5_000, `closed after ${Math.round(idleMs)} ms idle`)
    } finally {
      connection.socket.destroy()
    }
  })

  it('are kept 120 s by default: longer than AWS ALB and nginx (60 s) and Traefik (90 s) keep theirs', () => {
    assert.equal(parseConfig({}).keepAliveTimeout, 120)
    assert.ok(parseConfig({}).keepAliveTimeout > 90)
  })
})
