/**
 * The process: open the store, build the app, listen (the API, and the metrics
 * listener apart), and close everything cleanly on SIGTERM or SIGINT. With
 * WORKERS > 1 the primary migrates, serves the metrics of every worker, and leaves
 * the workers to src/process/workers.ts.
 */
import cluster from 'node:cluster'
import { setTimeout as sleep } from 'node:timers/promises'
import closeWithGrace from 'close-with-grace'
import type { FastifyBaseLogger } from 'fastify'
import type { DestinationStream } from 'pino'
import type { Registry } from 'prom-client'
import { buildApp, type App } from '../app.js'
import { ConfigError, type Config, type Tracing } from '../config.js'
import { issueFirstApiKey } from '../domain/first-api-key.js'
import type { RequestTimeouts } from '../schemas/limits.js'
import type { PostgresOptions } from '../store/postgres/store.js'
import { startIdempotencySweeper, type SweepCounts } from './idempotency-sweeper.js'
import { createLogger } from './logger.js'
import { processMetrics } from './process-metrics.js'
import { connectRedis } from './redis.js'
import { listenForScrapes, reportToThePrimary, sumOfWorkers, type MetricsListener, type Scrape } from './metrics-listener.js'
import { openMigratedStore } from './open-migrated-store.js'
import { loopThreadTimes } from './loop-thread.js'
import { openStore } from '../store/open-store.js'
import { superviseWorkers, tellThePrimaryStartFailed } from './workers.js'
import type { Store } from '../store/store.js'

/** How long a drain may take after SHUTDOWN_DELAY before the process exits 1: a grace period must cover both. */
export const SHUTDOWN_TIMEOUT_MS = 30_000

/** On a first start with no key anywhere, issues one and prints it once to stderr. */
async function ensureAnApiKey (store: Store, config: Config): Promise<void> {
  const key = await issueFirstApiKey(store, config.apiKeys.length + config.readOnlyApiKeys.length)
  if (key === undefined) return
  process.stderr.write(
    'petstore: no API key was configured, so one was issued. It is shown this once; keep it:\n' +
    `  ${key}\n` +
    'Send it as "Authorization: Bearer <key>". More keys: petstore keys create --name NAME\n')
}

/** The settings of one listener: the API's, or the metrics'. */
interface ListenSettings { port: number, host: string, portName: string, hostName: string }

/**
 * Why the port cannot be listened on, under the setting at fault: the port's when it is taken
 * or privileged (EADDRINUSE, EACCES below 1024), else the host's (EADDRNOTAVAIL, ENOTFOUND).
 */
function listenError (err: NodeJS.ErrnoException, { port, host, portName, hostName }: ListenSettings): ConfigError {
  if (err.code === 'EADDRINUSE') return new ConfigError(`${portName}: ${port} is already in use on ${host}`)
  return new ConfigError(`${err.code === 'EACCES' ? portName : hostName}: cannot listen on ${host}:${port} (${err.message})`)
}

/**
 * The metrics listener of METRICS_PORT (or `anyPort`, one the system picks) and METRICS_HOST, or
 * none when METRICS_PORT is 0.
 * @throws ConfigError naming the setting, when it cannot listen
 */
async function startMetricsListener (config: Config, scrape: Scrape, anyPort = false): Promise<MetricsListener | undefined> {
  if (config.metricsPort === 0) return undefined
  const { metricsHost: host, names } = config
  const port = anyPort ? 0 : config.metricsPort
  try {
    return await listenForScrapes({ port, host }, scrape)
  } catch (err) {
    throw listenError(err as NodeJS.ErrnoException, { port, host, portName: names.metricsPort, hostName: names.metricsHost })
  }
}

export interface RunningServer {
  app: App
  store: Store
  /** Its metrics, the requests' and the process's. */
  registry: Registry
  /** The idempotency sweeps' counts, among those metrics. */
  sweeps: SweepCounts
  /** The metrics listener: the only process's, unless METRICS_PORT is 0; a worker's metrics go to the primary. */
  metrics: MetricsListener | undefined
  url: string
  /**
   * Drains: /readyz answers 503 at once; after `delayMs` (the load balancer's time to
   * notice) the listener closes, requests in flight finish, then the store closes.
   */
  close: (delayMs?: number) => Promise<void>
}

export interface ServerOptions {
  /** Migrate the store and issue the first key: the only process does; a worker only serves. */
  migrate: boolean
  tracing?: Tracing
  /** Where the log lines go: stdout unless given (a test keeps them). */
  logDestination?: DestinationStream
  /** The clock of getPet's sunset: a test moves it. */
  now?: () => Date
  /** Slow-client bounds: a test shortens them. */
  timeouts?: RequestTimeouts
  /** PostgreSQL's pool options over the settings': a test shortens its timeouts. */
  postgres?: PostgresOptions
  /** Both listeners on ports the system picks, whatever PORT and METRICS_PORT say: tests side by side. */
  anyPorts?: boolean
}

/**
 * Starts one serving process, wired in the one order every serving process (and every test's
 * service) has: the store, the first key, metrics, Redis, the app, its listeners, the sweeper,
 * and their close in reverse.
 * @example const server = await startServer(config, { migrate: true }); await server.close()
 */
export async function startServer (config: Config, options: ServerOptions): Promise<RunningServer> {
  const logger = createLogger(config.logLevel, options.logDestination)
  // Imported only when traces are on: off, no part of the SDK is loaded.
  const tracing = options.tracing === undefined ? undefined : await (await import('./tracing.js')).startTracing(options.tracing, logger)
  const opened = options.migrate
    ? await openMigratedStore(config, options.postgres)
    : await openStore(config.databaseUrl, { readUrl: config.databaseReadUrl, poolWaitMs: config.poolWait, ...options.postgres })
  const store = tracing === undefined ? opened : tracing.traceStore(opened)
  if (options.migrate) await ensureAnApiKey(store, config)
  const metrics = processMetrics(store)
  const redis = config.redisUrl === undefined ? undefined : await connectRedis(config.redisUrl, logger)
  const app = await buildApp({ config, store, logger, registry: metrics.registry, redis, loopThread: loopThreadTimes, now: options.now, timeouts: options.timeouts, traces: tracing !== undefined })
  let url: string
  let metricsListener: MetricsListener | undefined
  try {
    url = await app.listen({ port: options.anyPorts === true ? 0 : config.port, host: config.host })
    if (cluster.isPrimary) metricsListener = await startMetricsListener(config, metrics.registry, options.anyPorts)
  } catch (err) {
    await app.close()
    redis?.disconnect()
    await store.close()
    await tracing?.shutdown()
    throw err instanceof ConfigError
      ? err
      : listenError(err as NodeJS.ErrnoException, { port: config.port, host: config.host, portName: config.names.port, hostName: config.names.host })
  }
  const sweeper = startIdempotencySweeper(store, metrics.sweeps, logger)

  let closing: Promise<void> | undefined
  const close = (delayMs = 0): Promise<void> => {
    closing ??= (async () => {
      app.startDraining()
      sweeper.stop()
      if (delayMs > 0) {
        logger.info({ delayMs }, 'draining: readyz answers 503')
        await sleep(delayMs)
      }
      await app.close() // waits for the requests in flight
      redis?.disconnect()
      await metricsListener?.close()
      await store.close()
      await tracing?.shutdown() // the spans of the last requests
      logger.info('closed')
    })()
    return closing
  }
  logger.info({ url, metrics: metricsListener?.origin, store: store.kind, pid: process.pid }, 'listening')
  return { app, store, registry: metrics.registry, sweeps: metrics.sweeps, metrics: metricsListener, url, close }
}

// Every event close-with-grace would listen to: SIGTERM and SIGINT come through closeOnSignals
// instead, which ignores repeats; the others keep Node's defaults.
const NOT_FOR_CLOSE_WITH_GRACE: closeWithGrace.AllEvents[] = [
  'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGSEGV', 'SIGUSR2', 'SIGTERM',
  'uncaughtException', 'unhandledRejection', 'beforeExit'
]

/**
 * The first SIGTERM or SIGINT drains through close-with-grace: exit 0 once closed, 1 on a failure
 * or past the time limit. Those after it are ignored, where close-with-grace would exit 1:
 * a supervisor may signal twice (systemd's control group, `tini -g`: a worker gets the
 * group's signal and the primary's), and the drain has its own time limit.
 */
function closeOnSignals (close: (delayMs: number) => Promise<void>, delayMs: number, logger: FastifyBaseLogger): void {
  const graceful = closeWithGrace({ delay: delayMs + SHUTDOWN_TIMEOUT_MS, logger, skip: NOT_FOR_CLOSE_WITH_GRACE }, async () => {
    await close(delayMs)
  })
  let draining = false
  const onSignal = (): void => {
    if (draining) return
    draining = true
    graceful.close()
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
}

/** A worker: serve, or tell the primary in one line why it cannot. */
async function serveAsWorker (config: Config, tracing: Tracing | undefined): Promise<void> {
  // An empty answer to the primary's scrapes until this worker serves, rather than none (a failed scrape).
  reportToThePrimary([])
  let server: RunningServer
  try {
    server = await startServer(config, { migrate: false, tracing })
  } catch (err) {
    tellThePrimaryStartFailed(err instanceof ConfigError ? err.message : `a worker failed to start (${(err as Error).message})`)
    return
  }
  reportToThePrimary([server.registry])
  closeOnSignals(server.close, config.shutdownDelay * 1000, server.app.log)
}

/** `petstore serve`: one process, or a primary and WORKERS workers; each serving process exports its own traces. */
export async function serve (config: Config, tracing?: Tracing): Promise<void> {
  if (cluster.isWorker) return await serveAsWorker(config, tracing)
  if (config.workers <= 1) {
    const server = await startServer(config, { migrate: true, tracing })
    closeOnSignals(server.close, config.shutdownDelay * 1000, server.app.log)
    return
  }
  // The primary migrates once and issues the first key; workers only serve.
  const store = await openMigratedStore(config)
  await ensureAnApiKey(store, config)
  await store.close()
  const metricsListener = await startMetricsListener(config, sumOfWorkers())
  superviseWorkers(config.workers, config.shutdownDelay * 1000 + SHUTDOWN_TIMEOUT_MS, metricsListener)
}
