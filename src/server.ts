/**
 * The process: open the store, build the app, listen (the API, and the metrics
 * listener apart), and close everything cleanly on SIGTERM or SIGINT. With
 * WORKERS > 1 the primary migrates, serves the metrics of every worker, and forks
 * workers that share the API port (node:cluster).
 */
import cluster from 'node:cluster'
import { setTimeout as sleep } from 'node:timers/promises'
import closeWithGrace from 'close-with-grace'
import type { FastifyBaseLogger } from 'fastify'
import { buildApp, type App } from './app.js'
import { ConfigError, type Config, type Tracing } from './config.js'
import { issueApiKey } from './domain/api-keys.js'
import { startIdempotencySweeper } from './idempotency-sweeper.js'
import { createLogger } from './logger.js'
import { listenForScrapes, reportToThePrimary, sumOfWorkers, type MetricsListener, type Scrape } from './metrics-listener.js'
import { openMigratedStore } from './open-database.js'
import { openStore } from './store/open-store.js'
import type { Store } from './store/store.js'

const SHUTDOWN_TIMEOUT_MS = 30_000

/**
 * On a first start with no key anywhere, issues one and prints it once to stderr.
 * @returns the key issued, if any
 */
export async function ensureAnApiKey (store: Store, config: Config): Promise<string | undefined> {
  if (config.apiKeys.length + config.readOnlyApiKeys.length > 0 || (await store.listApiKeys()).length > 0) return undefined
  let key: string
  try {
    key = await issueApiKey(store, { name: 'default' })
  } catch (err) {
    // Another instance issued it at the same moment; else no key exists, and serving would answer only 401s.
    if ((await store.listApiKeys()).length > 0) return undefined
    throw err
  }
  process.stderr.write(
    'petstore: no API key was configured, so one was issued. It is shown this once; keep it:\n' +
    `  ${key}\n` +
    'Send it as "Authorization: Bearer <key>". More keys: petstore keys create --name NAME\n')
  return key
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
 * The metrics listener of METRICS_PORT and METRICS_HOST, or none when METRICS_PORT is 0.
 * @throws ConfigError naming the setting, when it cannot listen
 */
async function startMetricsListener (config: Config, scrape: Scrape): Promise<MetricsListener | undefined> {
  if (config.metricsPort === 0) return undefined
  const { metricsPort: port, metricsHost: host, names } = config
  try {
    return await listenForScrapes({ port, host }, scrape)
  } catch (err) {
    throw listenError(err as NodeJS.ErrnoException, { port, host, portName: names.metricsPort, hostName: names.metricsHost })
  }
}

export interface RunningServer {
  app: App
  store: Store
  url: string
  /**
   * Drains: /readyz answers 503 at once; after `delayMs` (the load balancer's time to
   * notice) the listener closes, requests in flight finish, then the store closes.
   */
  close: (delayMs?: number) => Promise<void>
}

/**
 * Starts one serving process: the only process (`migrate`, and its own metrics listener),
 * or a worker (its metrics go to the primary).
 */
export async function startServer (config: Config, options: { migrate: boolean, tracing?: Tracing }): Promise<RunningServer> {
  const logger = createLogger(config.logLevel)
  // Imported only when traces are on: off, no part of the SDK is loaded.
  const tracing = options.tracing === undefined ? undefined : await (await import('./tracing.js')).startTracing(options.tracing, logger)
  const opened = options.migrate ? await openMigratedStore(config) : await openStore(config.databaseUrl)
  const store = tracing === undefined ? opened : tracing.traceStore(opened)
  if (options.migrate) await ensureAnApiKey(store, config)
  const app = await buildApp({ config, store, logger, traces: tracing !== undefined })
  let url: string
  let metricsListener: MetricsListener | undefined
  try {
    url = await app.listen({ port: config.port, host: config.host })
    if (cluster.isPrimary) metricsListener = await startMetricsListener(config, app.metrics.registry)
  } catch (err) {
    await app.close()
    await store.close()
    await tracing?.shutdown()
    throw err instanceof ConfigError
      ? err
      : listenError(err as NodeJS.ErrnoException, { port: config.port, host: config.host, portName: config.names.port, hostName: config.names.host })
  }
  const sweeper = startIdempotencySweeper(store, app.metrics, logger)

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
      await metricsListener?.close()
      await store.close()
      await tracing?.shutdown() // the spans of the last requests
      logger.info('closed')
    })()
    return closing
  }
  logger.info({ url, metrics: metricsListener?.origin, store: store.kind, pid: process.pid }, 'listening')
  return { app, store, url, close }
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

/** What a worker that cannot start tells the primary, before it exits 1. */
interface StartFailed { type: 'petstore:start-failed', message: string }

function isStartFailed (message: unknown): message is StartFailed {
  return typeof message === 'object' && message !== null && (message as StartFailed).type === 'petstore:start-failed'
}

/** A worker: serve, or tell the primary in one line why it cannot. */
async function serveAsWorker (config: Config, tracing: Tracing | undefined): Promise<void> {
  // An empty answer to the primary's scrapes until this worker serves, rather than none (a failed scrape).
  reportToThePrimary([])
  let server: RunningServer
  try {
    server = await startServer(config, { migrate: false, tracing })
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : `a worker failed to start (${(err as Error).message})`
    const failed: StartFailed = { type: 'petstore:start-failed', message }
    process.send?.(failed, () => process.exit(1))
    return
  }
  reportToThePrimary([server.app.metrics.registry])
  closeOnSignals(server.close, config.shutdownDelay * 1000, server.app.log)
}

/**
 * The primary: forks the workers, replaces a worker that dies after it was
 * serving, and stops them all on SIGTERM/SIGINT (exit 0 once each has closed),
 * its metrics listener with them.
 * A worker that fails before it serves would fail again if forked again, so the
 * primary stops the others and exits 1 with that worker's one-line error.
 */
function superviseWorkers (count: number, shutdownDelayMs: number, metricsListener: MetricsListener | undefined): void {
  const live = new Set<number>()
  const serving = new Set<number>()
  let stopping = false
  let failure: string | undefined

  const fork = (): void => { live.add(cluster.fork().id) }
  const stop = (): void => {
    if (stopping) return
    stopping = true
    void metricsListener?.close()
    setTimeout(() => process.exit(1), shutdownDelayMs + SHUTDOWN_TIMEOUT_MS).unref()
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
    exitWhenAllGone()
  }
  const exitWhenAllGone = (): void => {
    if (live.size > 0) return
    if (failure !== undefined) process.stderr.write(`petstore: ${failure}\n`)
    process.exit(failure === undefined ? 0 : 1)
  }

  cluster.on('listening', (worker) => serving.add(worker.id))
  cluster.on('message', (_worker, message: unknown) => {
    if (isStartFailed(message)) failure ??= message.message
  })
  cluster.on('exit', (worker, code, signal) => {
    const wasServing = serving.delete(worker.id)
    const settle = (): void => {
      live.delete(worker.id)
      if (stopping) {
        // A serving worker killed while it drained may have cut requests short: not a clean stop.
        // One still starting (its signal handlers not yet set) had nothing to drain.
        if (wasServing && code !== 0) failure ??= `worker ${worker.process.pid} exited with ${code ?? signal} while draining`
        return exitWhenAllGone()
      }
      if (wasServing) {
        process.stderr.write(`petstore: worker ${worker.process.pid} exited with ${code ?? signal}; starting another\n`)
        return fork()
      }
      failure ??= `a worker exited with ${code ?? signal} before it could serve`
      stop()
    }
    // Its last message (why it failed) is read before its channel closes.
    if (worker.isConnected()) worker.once('disconnect', settle)
    else settle()
  })

  for (let i = 0; i < count; i++) fork()
  // Its own stop, not close-with-grace: a worker's failure starts it too, and its exit code is its workers'.
  // Every signal after the first is ignored by stop(), as by closeOnSignals.
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
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
  superviseWorkers(config.workers, config.shutdownDelay * 1000, metricsListener)
}
