/**
 * The process: open the store, build the app, listen, and close everything
 * cleanly on SIGTERM or SIGINT. With WORKERS > 1 the primary migrates, then
 * forks workers that share the port (node:cluster).
 */
import cluster from 'node:cluster'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp, type App } from './app.js'
import { ConfigError, type Config } from './config.js'
import { issueApiKey } from './domain/api-keys.js'
import { IDEMPOTENCY_TTL_MS } from './domain/pets.js'
import { createLogger } from './logger.js'
import { openStore } from './store/open-store.js'
import type { Store } from './store/store.js'

const SHUTDOWN_TIMEOUT_MS = 30_000
const SWEEP_INTERVAL_MS = 60 * 60 * 1000

/** Opens and migrates the store; an unreachable database is a ConfigError naming DATABASE_URL. */
export async function openMigratedStore (databaseUrl: string): Promise<Store> {
  let store: Store | undefined
  try {
    store = await openStore(databaseUrl)
    await store.migrate()
    return store
  } catch (err) {
    await store?.close().catch(() => {})
    throw new ConfigError(`DATABASE_URL: cannot open the database (${(err as Error).message})`)
  }
}

/**
 * On a first start with no key anywhere, issues one and prints it once to stderr.
 * @returns the key issued, if any
 */
export async function ensureAnApiKey (store: Store, config: Config): Promise<string | undefined> {
  if (config.apiKeys.length > 0 || (await store.listApiKeys()).length > 0) return undefined
  let key: string
  try {
    key = await issueApiKey(store, 'default')
  } catch {
    return undefined // another instance issued it at the same moment
  }
  process.stderr.write(
    'petstore: no API key was configured, so one was issued. It is shown this once; keep it:\n' +
    `  ${key}\n` +
    'Send it as "Authorization: Bearer <key>". More keys: petstore keys create --name NAME\n')
  return key
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

/** Starts one serving process (a worker, or the only process). */
export async function startServer (config: Config, options: { migrate: boolean }): Promise<RunningServer> {
  const logger = createLogger(config.logLevel)
  const store = options.migrate ? await openMigratedStore(config.databaseUrl) : await openStore(config.databaseUrl)
  if (options.migrate) await ensureAnApiKey(store, config)
  const app = await buildApp({ config, store, logger })
  let url: string
  try {
    url = await app.listen({ port: config.port, host: config.host })
  } catch (err) {
    await app.close()
    await store.close()
    const code = (err as NodeJS.ErrnoException).code
    throw new ConfigError(code === 'EADDRINUSE'
      ? `PORT: ${config.port} is already in use on ${config.host}`
      : `HOST: cannot listen on ${config.host}:${config.port} (${(err as Error).message})`)
  }
  const sweeper = setInterval(() => {
    store.sweepIdempotencyKeys(new Date(Date.now() - IDEMPOTENCY_TTL_MS))
      .catch((err: unknown) => logger.warn({ err }, 'idempotency key sweep failed'))
  }, SWEEP_INTERVAL_MS).unref()

  let closing: Promise<void> | undefined
  const close = (delayMs = 0): Promise<void> => {
    closing ??= (async () => {
      app.startDraining()
      clearInterval(sweeper)
      if (delayMs > 0) {
        logger.info({ delayMs }, 'draining: readyz answers 503')
        await sleep(delayMs)
      }
      await app.close() // waits for the requests in flight
      await store.close()
      logger.info('closed')
    })()
    return closing
  }
  logger.info({ url, store: store.kind, pid: process.pid }, 'listening')
  return { app, store, url, close }
}

function closeOnSignals (close: (delayMs: number) => Promise<void>, delayMs: number): void {
  const onSignal = (): void => {
    setTimeout(() => process.exit(1), delayMs + SHUTDOWN_TIMEOUT_MS).unref()
    close(delayMs).then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)
}

/** `petstore serve`: one process, or a primary and WORKERS workers. */
export async function serve (config: Config): Promise<void> {
  if (config.workers <= 1 || cluster.isWorker) {
    const server = await startServer(config, { migrate: !cluster.isWorker })
    closeOnSignals(server.close, config.shutdownDelay * 1000)
    return
  }
  // The primary migrates once and issues the first key; workers only serve.
  const store = await openMigratedStore(config.databaseUrl)
  await ensureAnApiKey(store, config)
  await store.close()
  let stopping = false
  for (let i = 0; i < config.workers; i++) cluster.fork()
  cluster.on('exit', (worker, code) => {
    if (!stopping && code !== 0) {
      process.stderr.write(`petstore: worker ${worker.process.pid} exited with ${code}; starting another\n`)
      cluster.fork()
    }
    if (stopping && Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
  })
  const stop = (): void => {
    stopping = true
    setTimeout(() => process.exit(1), config.shutdownDelay * 1000 + SHUTDOWN_TIMEOUT_MS).unref()
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}
