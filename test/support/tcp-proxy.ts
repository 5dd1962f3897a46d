/**
 * A TCP proxy between the service and a real server (PostgreSQL), that a test
 * cuts and restores to play an outage without touching the server itself.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * How a cut behaves. `reset`: established connections are destroyed and new ones
 * refused at once (a crashed host). `hang`: established connections are destroyed
 * and new ones accepted but never answered (a dropped route). `stall`: nothing is
 * destroyed, nothing gets through (a silent partition): only timeouts end the waits.
 */
export type CutMode = 'reset' | 'hang' | 'stall'

export class TcpProxy {
  readonly #server: Server
  readonly #target: { host: string, port: number }
  readonly #sockets = new Set<Socket>()
  readonly #pairs = new Set<[Socket, Socket]>()
  #cut: CutMode | undefined

  private constructor (server: Server, target: { host: string, port: number }) {
    this.#server = server
    this.#target = target
    server.on('connection', (client) => this.#accept(client))
  }

  /** @example const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 }) */
  static async start (target: { host: string, port: number }): Promise<TcpProxy> {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return new TcpProxy(server, target)
  }

  get port (): number {
    return (this.#server.address() as { port: number }).port
  }

  /** Cuts the network as `mode` says, until restore(). */
  cut (mode: CutMode = 'reset'): void {
    this.#cut = mode
    if (mode !== 'stall') return this.#destroyAll()
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream)
      upstream.unpipe(client)
      client.pause()
      upstream.pause()
    }
  }

  restore (): void {
    this.#cut = undefined
    this.#destroyAll() // connections stalled by a hang or a stall: their callers have given up
  }

  async close (): Promise<void> {
    this.#destroyAll()
    await new Promise((resolve) => this.#server.close(resolve))
  }

  #track (socket: Socket): void {
    this.#sockets.add(socket)
    socket.once('close', () => this.#sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }

  #destroyAll (): void {
    for (const socket of this.#sockets) socket.destroy()
  }

  #accept (client: Socket): void {
    this.#track(client)
    if (this.#cut === 'reset') {
      client.resetAndDestroy()
      return
    }
    if (this.#cut !== undefined) return // hang or stall: accepted, never answered
    const upstream = createConnection(this.#target)
    this.#track(upstream)
    const pair: [Socket, Socket] = [client, upstream]
    this.#pairs.add(pair)
    client.pipe(upstream)
    upstream.pipe(client)
    // One side gone: the other goes too, so the server sees its client leave (and rolls back).
    client.once('close', () => { upstream.destroy(); this.#pairs.delete(pair) })
    upstream.once('close', () => client.destroy())
  }
}
