/**
 * A TCP proxy between the service and a real server (PostgreSQL), that a test
 * cuts and restores to play an outage without touching the server itself.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * How a cut behaves: `reset` refuses new connections at once (a crashed host);
 * `hang` accepts them and never answers (a dropped network), so only timeouts end the wait.
 */
export type CutMode = 'reset' | 'hang'

export class TcpProxy {
  readonly #server: Server
  readonly #target: { host: string, port: number }
  readonly #sockets = new Set<Socket>()
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

  /** Destroys every established connection, both sides, and refuses or stalls new ones until restore(). */
  cut (mode: CutMode = 'reset'): void {
    this.#cut = mode
    this.#destroyAll()
  }

  restore (): void {
    this.#cut = undefined
    this.#destroyAll() // connections stalled by a hang: their callers have given up
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
    if (this.#cut === 'reset') return void client.resetAndDestroy()
    if (this.#cut === 'hang') return
    const upstream = createConnection(this.#target)
    this.#track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    // One side gone: the other goes too, so the server sees its client leave (and rolls back).
    client.once('close', () => upstream.destroy())
    upstream.once('close', () => client.destroy())
  }
}
