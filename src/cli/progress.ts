/**
 * Progress of long work: on a terminal a bar and a closing line with the speed;
 * in a pipe nothing at all (the exit code says how it went).
 */
import cliProgress from 'cli-progress'

export interface Progress {
  /** `done` counts towards the total; `animals` is shown beside the bar. */
  update: (done: number, animals: number) => void
  stop: () => void
}

/**
 * A bar on stderr when it is a terminal and the total is known; else nothing is shown.
 * @example const progress = startProgress('seeding', 1_000_000); progress.update(10_000, 10_000); progress.stop()
 */
export function startProgress (verb: string, total: number | undefined): Progress {
  if (!process.stderr.isTTY || total === undefined) return { update: () => {}, stop: () => {} }
  const bar = new cliProgress.SingleBar({
    format: `${verb} [{bar}] {percentage}% | {animals} animals | ETA {eta_formatted}`,
    stream: process.stderr,
    hideCursor: true
  }, cliProgress.Presets.shades_classic)
  bar.start(total, 0, { animals: 0 })
  return { update: (done, animals) => bar.update(done, { animals }), stop: () => bar.stop() }
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
