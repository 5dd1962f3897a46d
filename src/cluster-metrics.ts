/**
 * Metrics of the whole process group when WORKERS > 1. Each worker counts only
 * what it serves, so the worker that gets a scrape asks the primary; the primary
 * asks every worker for its own metrics over the cluster channel, merges them
 * with prom-client's `AggregatorRegistry.aggregate` (counters and histograms
 * summed) and answers. A worker that does not answer within a second is left
 * out of that scrape rather than hanging it; `petstore_workers_reporting` says
 * how many answered.
 */
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry, Gauge, Registry } from 'prom-client'

/** How long the primary waits for each worker's own metrics. */
const WORKER_ANSWER_MS = 1_000
/** How long a worker waits for the primary's merged report: the primary's own wait, and some slack. */
const PRIMARY_ANSWER_MS = 5_000

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>

/** worker → primary: a scrape came in, merge every worker's metrics. */
interface ScrapeRequest { type: 'petstore:metrics-scrape', id: number }
/** primary → that worker: the merged text, or why there is none. */
interface ScrapeReport { type: 'petstore:metrics-report', id: number, text?: string, error?: string }
/** primary → every worker: send me your own metrics. */
interface CollectRequest { type: 'petstore:metrics-collect', id: number }
/** worker → primary: its own metrics. */
interface CollectAnswer { type: 'petstore:metrics-local', id: number, metrics: MetricsJson }

type Message = ScrapeRequest | ScrapeReport | CollectRequest | CollectAnswer

function isMessage<T extends Message> (message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as Message).type === type
}

/**
 * In the primary: answers the workers' scrapes with the metrics of every worker.
 * @example if (cluster.isPrimary) answerClusterScrapes()
 */
export function answerClusterScrapes (): void {
  const collecting = new Map<number, (worker: Worker, metrics: MetricsJson) => void>()
  let nextId = 0

  const gather = async (): Promise<string> => {
    const id = nextId++
    const asked = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker?.isConnected() === true)
    const answers = new Map<number, MetricsJson>()
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, WORKER_ANSWER_MS)
      const settleIfAll = (): void => {
        if (answers.size < asked.length) return
        clearTimeout(timer)
        resolve()
      }
      collecting.set(id, (worker, metrics) => {
        if (!asked.includes(worker)) return
        answers.set(worker.id, metrics)
        settleIfAll()
      })
      const request: CollectRequest = { type: 'petstore:metrics-collect', id }
      // A worker that exits meanwhile is simply left out: its send error is not the scrape's.
      for (const worker of asked) worker.send(request, () => {})
      settleIfAll()
    })
    collecting.delete(id)

    const merged = AggregatorRegistry.aggregate([...answers.values()])
    for (const [name, help, value] of [
      ['petstore_workers', 'Worker processes serving when this scrape was taken.', asked.length],
      ['petstore_workers_reporting', 'Worker processes whose counts this scrape includes (the others did not answer within a second).', answers.size]
    ] as const) {
      const gauge = new Gauge({ name, help, registers: [] })
      gauge.set(value)
      merged.registerMetric(gauge)
    }
    return await merged.metrics()
  }

  cluster.on('message', (worker, message: unknown) => {
    if (isMessage<CollectAnswer>(message, 'petstore:metrics-local')) {
      collecting.get(message.id)?.(worker, message.metrics)
    } else if (isMessage<ScrapeRequest>(message, 'petstore:metrics-scrape')) {
      const reply = (report: ScrapeReport): void => { if (worker.isConnected()) worker.send(report, () => {}) }
      gather().then(
        (text) => reply({ type: 'petstore:metrics-report', id: message.id, text }),
        (err: unknown) => reply({ type: 'petstore:metrics-report', id: message.id, error: (err as Error).message }))
    }
  })
}

/** The worker's own registry, sent when the primary collects (a worker runs one app). */
let localRegistry: Registry | undefined
const waitingReports = new Map<number, (report: ScrapeReport) => void>()
let nextScrapeId = 0

function listenToThePrimary (): void {
  process.on('message', (message: unknown) => {
    if (isMessage<CollectRequest>(message, 'petstore:metrics-collect')) {
      localRegistry?.getMetricsAsJSON().then((metrics) => {
        const answer: CollectAnswer = { type: 'petstore:metrics-local', id: message.id, metrics }
        process.send?.(answer, () => {})
      }, () => {}) // no answer: the primary leaves this worker out after its wait
    } else if (isMessage<ScrapeReport>(message, 'petstore:metrics-report')) {
      waitingReports.get(message.id)?.(message)
    }
  })
}

async function scrapeThroughThePrimary (): Promise<string> {
  const id = nextScrapeId++
  return await new Promise((resolve, reject) => {
    const settle = (outcome: () => void): void => {
      clearTimeout(timer)
      waitingReports.delete(id)
      outcome()
    }
    const timer = setTimeout(() => settle(() => reject(new Error(`the primary did not answer a metrics scrape within ${PRIMARY_ANSWER_MS} ms`))), PRIMARY_ANSWER_MS)
    waitingReports.set(id, (report) => settle(() => report.text !== undefined
      ? resolve(report.text)
      : reject(new Error(`the primary could not merge the workers' metrics (${report.error ?? 'no reason given'})`))))
    const request: ScrapeRequest = { type: 'petstore:metrics-scrape', id }
    process.send!(request, (err: Error | null) => { if (err !== null) settle(() => reject(err)) })
  })
}

/**
 * A registry whose `metrics()` covers the whole process group: in a cluster
 * worker it answers with every worker's metrics merged by the primary; in a
 * single process it answers with its own, like any registry.
 * @example const registry = new ProcessGroupRegistry(); await registry.metrics()
 */
export class ProcessGroupRegistry extends Registry {
  readonly #inWorker = cluster.isWorker && process.send !== undefined

  constructor () {
    super()
    if (!this.#inWorker) return
    if (localRegistry === undefined) listenToThePrimary()
    localRegistry = this
  }

  override async metrics (): Promise<string> {
    return this.#inWorker ? await scrapeThroughThePrimary() : await super.metrics()
  }
}
