/**
 * The metrics listener: `GET /metrics` on a port apart from the API's, since the
 * metrics name API keys (customers). With WORKERS > 1 the primary serves it with the
 * sum of every worker, gathered by prom-client's AggregatorRegistry over its own
 * cluster channel.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AggregatorRegistry, type Registry } from 'prom-client'

export interface MetricsListener {
  /** http://HOST:PORT */
  origin: string
  close: () => Promise<void>
}

/** The exposition, and its content type. */
export interface Scrape {
  contentType: string
  metrics: () => Promise<string>
}

/**
 * Listens on `port` (0: any free one) and answers `GET /metrics` (and HEAD) with `scrape`;
 * any other path is 404, any other method 405. Rejects with the listen error (EADDRINUSE, …).
 * @example const listener = await listenForScrapes({ port: 9464, host: '127.0.0.1' }, processMetrics(store).registry)
 */
export async function listenForScrapes (address: { port: number, host: string }, scrape: Scrape): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]
    if (path !== '/metrics') return response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n')
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed: GET /metrics\n')
    }
    scrape.metrics().then((text) => {
      response.writeHead(200, { 'content-type': scrape.contentType }).end(request.method === 'HEAD' ? undefined : text)
    }, (err: unknown) => {
      // Prometheus records a failed scrape (up = 0) rather than partial counts.
      response.writeHead(503, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${(err as Error).message}\n`)
    })
  })
  server.listen(address.port, address.host)
  // Rejects with the listen error ('error' before 'listening').
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const host = address.host.includes(':') ? `[${address.host}]` : address.host
  return {
    origin: `http://${host}:${port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/**
 * In the primary: every worker's metrics, summed (counters, histograms) or as each
 * process metric says; a worker that does not answer within 5 s fails the scrape.
 * @example await listenForScrapes(address, sumOfWorkers())
 */
export function sumOfWorkers (): Scrape {
  const aggregator = new AggregatorRegistry()
  return { contentType: aggregator.contentType, metrics: async () => await aggregator.clusterMetrics() }
}

/**
 * In a worker: answers the primary's requests with `registries` (none: an empty answer).
 * @example reportToThePrimary([server.registry])
 */
export function reportToThePrimary (registries: Registry[]): void {
  AggregatorRegistry.setRegistries(registries)
  // Constructing one is what makes a worker answer the primary (prom-client's lib/cluster.js).
  void new AggregatorRegistry()
}
