/**
 * A TCP proxy between a client and a real server (the service and PostgreSQL, or the typed
 * client and the service), that a test cuts and restores to play an outage without touching
 * the server itself, or that loses answers on their way back.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * How a cut behaves. `reset`: established connections are destroyed and new ones
 * refused at once (a crashed host). `hang`: established connections are destroyed
 * and new ones accepted but never answered (a dropped route). `stall`: nothing is
 * destroyed, nothing gets through (a silent partition): only timeouts end the waits.
 */
export type CutMode = 'reset' | 'hang' | 'stall'

export interface TcpProxyOptions {
  /** Keeps every byte clients send, for sent(): an HTTP test reads its requests' headers there. */
  keepSent?: boolean
}

export class TcpProxy {
  readonly #server: Server
  readonly #target: { host: string, port: number }
  readonly #sockets = new Set<Socket>()
  readonly #pairs = new Set<[Socket, Socket]>()
  readonly #keepSent: boolean
  #sent = ''
  #cut: CutMode | undefined
  #answersToReset = 0

  private constructor (server: Server, target: { host: string, port: number }, options: TcpProxyOptions) {
    this.#server = server
    this.#target = target
    this.#keepSent = options.keepSent ?? false
    server.on('connection', (client) => this.#accept(client))
  }

  /** @example const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 }) */
  static async start (target: { host: string, port: number }, options: TcpProxyOptions = {}): Promise<TcpProxy> {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return new TcpProxy(server, target, options)
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

  /**
   * The next `count` connections carry what the client sends to the server, but each is reset
   * the moment the server answers: the request done, its answer lost on the way back.
   * @example proxy.resetAnswers(1); await client.createPet(pet) // the server created it; the client tries again
   */
  resetAnswers (count: number): void {
    this.#answersToReset = count
  }

  /** Everything clients sent so far, as latin1 text; started with `keepSent` only. */
  sent (): string {
    if (!this.#keepSent) throw new Error('TcpProxy.sent() needs TcpProxy.start(target, { keepSent: true })')
    return this.#sent
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
    if (this.#keepSent) client.on('data', (chunk: Buffer) => { this.#sent += chunk.toString('latin1') })
    client.pipe(upstream)
    if (this.#answersToReset > 0) {
      this.#answersToReset--
      upstream.once('data', () => { client.resetAndDestroy(); upstream.destroy() })
    } else {
      upstream.pipe(client)
    }
    // One side gone: the other goes too, so the server sees its client leave (and rolls back).
    client.once('close', () => { upstream.destroy(); this.#pairs.delete(pair) })
    upstream.once('close', () => client.destroy())
  }
}
