/**
 * Cluster supervision (WORKERS > 1): the primary forks workers that share the API port,
 * replaces one that dies while serving, and stops them all together; a worker that cannot
 * start tells the primary why, in one line.
 */
import cluster from 'node:cluster'
import type { MetricsListener } from './metrics-listener.js'

/** What a worker that cannot start tells the primary, before it exits 1. */
interface StartFailed { type: 'petstore:start-failed', message: string }

function isStartFailed (message: unknown): message is StartFailed {
  return typeof message === 'object' && message !== null && (message as StartFailed).type === 'petstore:start-failed'
}

/**
 * From a worker that cannot start: the one line the primary prints, then this worker exits 1.
 * @example tellThePrimaryStartFailed('PORT: 8080 is already in use on 127.0.0.1')
 */
export function tellThePrimaryStartFailed (message: string): void {
  const failed: StartFailed = { type: 'petstore:start-failed', message }
  process.send?.(failed, () => process.exit(1))
}

/**
 * The primary: forks the workers, replaces a worker that dies after it was
 * serving, and stops them all on SIGTERM/SIGINT (exit 0 once each has closed),
 * its metrics listener with them.
 * A worker that fails before it serves would fail again if forked again, so the
 * primary stops the others and exits 1 with that worker's one-line error.
 */
export function superviseWorkers (count: number, stopTimeoutMs: number, metricsListener: MetricsListener | undefined): void {
  const live = new Set<number>()
  const serving = new Set<number>()
  let stopping = false
  let failure: string | undefined

  const fork = (): void => { live.add(cluster.fork().id) }
  const stop = (): void => {
    if (stopping) return
    stopping = true
    void metricsListener?.close()
    setTimeout(() => process.exit(1), stopTimeoutMs).unref()
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
