/**
 * Progress of long work: on a terminal a bar and a closing line with the speed;
 * in a pipe nothing at all (the exit code says how it went). On a terminal or not,
 * SIGINT and SIGTERM ask the work to stop after its batch in flight.
 */
import { constants } from 'node:os'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import cliProgress from 'cli-progress'
import { CliError } from './errors.js'

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const
type StopSignal = typeof STOP_SIGNALS[number]

export interface Progress {
  /** `done` counts towards the total; `animals`, those committed so far, is shown beside the bar. */
  update: (done: number, animals: number) => void
  /**
   * The signal that asked the work to stop, once one came; the work then stops before its next
   * batch. It waits for the event loop, where signals are delivered: a synchronous SQLite batch
   * never leaves it.
   */
  stopSignal: () => Promise<StopSignal | undefined>
  /** Stops the bar, giving the terminal back its cursor and line wrap, and the listening for signals. */
  stop: () => void
}

/** The exit code of a process stopped by `signal`, as a shell reports it: 130 for SIGINT, 143 for SIGTERM. */
function exitCodeOf (signal: StopSignal): number {
  return 128 + constants.signals[signal]
}

/**
 * The error that ends work stopped by a signal: its one line and the signal's exit code.
 * @example throw stoppedBy('SIGINT', 'the 20000 animals added before it stay in the database')
 */
export function stoppedBy (signal: StopSignal, what: string): CliError {
  return new CliError(`stopped by ${signal}; ${what}`, { exitCode: exitCodeOf(signal) })
}

/**
 * A bar on stderr when it is a terminal and the total is known; else nothing is shown. SIGINT and
 * SIGTERM are caught until `stop`: the first asks the work to stop (`stopSignal`); a second ends
 * the process at once, the terminal restored, without waiting for the batch in flight.
 * `unit` names the count shown beside the bar.
 * @example const progress = startProgress('seeding', 1_000_000); progress.update(10_000, 10_000); progress.stop()
 */
export function startProgress (verb: string, total: number | undefined, unit = 'animals'): Progress {
  const bar = process.stderr.isTTY && total !== undefined
    ? new cliProgress.SingleBar({
      format: `${verb} [{bar}] {percentage}% | {animals} ${unit} | ETA {eta_formatted}`,
      stream: process.stderr,
      hideCursor: true
    }, cliProgress.Presets.shades_classic)
    : undefined
  let committed = 0
  let received: StopSignal | undefined
  const onSignal = (signal: StopSignal): void => {
    if (received === undefined) {
      received = signal
      return
    }
    bar?.stop()
    process.stderr.write(`petstore: stopped by ${signal} twice, without waiting for the batch in flight; ${committed === 0 ? 'nothing was committed before it' : `the ${committed} animals committed before it stay in the database`}\n`)
    process.exit(exitCodeOf(signal))
  }
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  bar?.start(total ?? 0, 0, { animals: 0 })
  return {
    update: (done, animals) => {
      committed = animals
      bar?.update(done, { animals })
    },
    stopSignal: async () => {
      if (received === undefined) await yieldToEventLoop()
      return received
    },
    stop: () => {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
      bar?.stop()
    }
  }
}

/**
 * The closing line on a terminal: how many animals, how long, how fast.
 * @example reportDone('seeded', 1_000_000, started) // seeded 1000000 animals in 6.2 s (161290 a second)
 */
export function reportDone (verb: string, animals: number, started: number): void {
  if (!process.stderr.isTTY) return
  const seconds = (performance.now() - started) / 1000
  process.stderr.write(`${verb} ${animals} animals in ${seconds.toFixed(1)} s (${Math.round(animals / seconds)} a second)\n`)
}
