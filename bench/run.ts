/** `npm run bench`: the race (`--overload`: overload.ts), its report on stdout and in bench/results/; see README. */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs'
import { rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readFlags, say } from './flags.js'
import { SCALE_WORKLOADS, WORKLOADS, pickPath, workloadSpec, type Workload } from './load.js'
import { overload, overloadSmoke, parseOverloadOptions } from './overload.js'
import { heading, mib, rate, ratios, workloadTables, type Measurement } from './report.js'
import { ROOT, atEnd, cleanUp, deepCursors, prepare, run, runLoad } from './targets.js'
import { startArguments, type Recipe, type Started } from './targets.js'

function parseOptions (argv: string[]) {
  const flags = readFlags(argv, ['duration', 'runs', 'only', 'postgres', 'baseline'], ['scale', 'smoke'])
  const smoke = flags.given('smoke')
  const baseline = flags.text('baseline')
  if (baseline !== undefined) run(ROOT, 'git', ['rev-parse', '--verify', `${baseline}^{commit}`])
  return {
    duration: smoke ? 0.25 : flags.number('duration', 10),
    runs: smoke ? 1 : flags.number('runs', 2, true),
    // The smoke checks the bench, not the service: a queue of its own, on a busy machine, would be refused.
    connections: smoke ? 10 : 50,
    workloads: flags.list('only', WORKLOADS),
    animals: smoke ? 200 : 10_000,
    postgres: flags.postgres,
    baseline,
    scale: flags.given('scale'),
    smoke
  }
}

/** `--baseline COMMIT`: that commit built in a worktree of its own, with this tree's node_modules when it can. */
function buildBaseline (commitish: string): { root: string, name: string, subject: string } {
  const git = (args: string[]): string => run(ROOT, 'git', args)
  const commit = git(['rev-parse', '--short', `${commitish}^{commit}`])
  const dir = mkdtempSync(join(tmpdir(), 'petstore-baseline-'))
  // --force: its dist/ and node_modules (a link, not followed) are untracked.
  atEnd(async () => { git(['worktree', 'remove', '--force', dir]) })
  say(`baseline: building ${commit} in a git worktree at ${dir}`)
  git(['worktree', 'add', '--detach', dir, commit])
  // This tree's node_modules when the old lock installs the same for the service itself (and TypeScript): no npm ci.
  type Lock = { packages: Record<string, { version?: string, dev?: boolean }> }
  const ours = (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock).packages
  const old = (JSON.parse(git(['show', `${commit}:package-lock.json`])) as Lock).packages
  if (Object.entries(old).every(([path, { dev, version }]) => path === '' ||
    (dev === true && path !== 'node_modules/typescript') || ours[path]?.version === version)) {
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'), 'dir')
  } else {
    say('baseline: its dependencies differ, npm ci')
    run(dir, 'npm', ['ci', '--no-audit', '--no-fund'])
  }
  run(dir, 'npm', ['run', '--silent', 'build'])
  return { root: dir, name: `baseline (${commit})`, subject: git(['log', '-1', '--format=%s', commit]) }
}

/** A target started, the target it is set against, the deep list's cursors. */
type Entry = Started & { base: string, cursors?: string[] }

/** Reads a file once so its pages are in the OS page cache, as on a server up for a while. */
function warmPageCache (path: string): void {
  const chunk = Buffer.allocUnsafe(1 << 20)
  for (const file of [path, `${path}-wal`].filter(existsSync)) {
    const fd = openSync(file, 'r')
    while (readSync(fd, chunk) > 0);
    closeSync(fd)
  }
}

const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!

async function bench (options: ReturnType<typeof parseOptions>, work: string) {
  const startLoad = loadAverage()
  const start = await prepare(work, options.animals, options.postgres, options.smoke)
  const baseline = options.baseline === undefined ? undefined : buildBaseline(options.baseline)

  // The services as shipped, admission stage on: it refuses only for queues of its own, and 50 connections make none.
  const recipes: Array<Recipe & { base: string }> = []
  for (const [base, sqlite] of [['service', true], ['service, PostgreSQL', false]] as const) {
    if (!sqlite && options.postgres === undefined) continue
    recipes.push({ name: base, base, sqlite })
    const { name, root } = baseline ?? {}
    if (root !== undefined) recipes.push({ name: `${name!}${sqlite ? '' : ', PostgreSQL'}`, base, sqlite, root })
    recipes.push({ name: `Fastify app, ${sqlite ? 'SQLite' : 'pg'}`, base, sqlite, peer: 'fastify' },
      { name: `node:http + ${sqlite ? 'SQLite' : 'pg'}`, base, sqlite, peer: 'bare' })
  }
  const entries: Entry[] = await Promise.all(recipes.map(async (r) => ({ ...await start(r), base: r.base })))

  /** Every workload on every target in turn, `options.runs` times, each started afresh for each run. */
  const race = async (what: string, all: Entry[], workloads: readonly Workload[]): Promise<Measurement[]> => {
    const measured: Measurement[] = []
    for (let run = 1; run <= options.runs; run++) {
      // A process here keeps for its life a speed up to 20 % off another start's: each run starts them anew.
      if (run > 1) await Promise.all(all.map(async (entry) => { entry.target = await entry.start() }))
      for (const workload of workloads) {
        say(`${what}${workload}, run ${run} of ${options.runs}`)
        // Every other run in reverse order: no target is always the one measured first.
        for (const { target, base, file, animals, cursors } of run % 2 === 1 ? all : [...all].reverse()) {
          // This machine's host evicts page cache it deems cold: a random get would wait for the disk.
          if (file !== undefined) warmPageCache(file)
          const spec = workloadSpec(workload, animals, cursors)
          const load = { spec, origin: target.origin, connections: options.connections }
          target.resetPeakRss()
          // A request, then 2 s of warm-up (not in a smoke): what a target starts on its first must not eat the window.
          await (await fetch(`${target.origin}${pickPath(spec)}`, spec)).arrayBuffer()
          if (!options.smoke) await runLoad({ ...load, seconds: 2 })
          const cpuBefore = target.cpuSeconds()
          const result = await runLoad({ ...load, seconds: options.duration })
          const cpuUs = result.requests > 0 ? (target.cpuSeconds() - cpuBefore) * 1e6 / result.requests : 0
          say(`  ${target.name}, ${workload}: ${Math.round(result.reqPerSec)} req/s, failed ${result.failed}`)
          measured.push({ target: target.name, base, workload, run, ...result, cpuUs, rssBytes: target.peakRss() })
        }
      }
      await Promise.all(all.map(async ({ target }) => { await target.stop() }))
    }
    return measured
  }
  // The overload run's smoke first, on the service: its generator, no quota.
  const smoked = options.smoke ? await overloadSmoke(entries[0]!.target) : ''
  const main = await race('', entries, options.workloads)

  const sections = [
    `${heading('Benchmark')} Load average ${startLoad} at the start, ${loadAverage()} at the end.`,
    `- ${options.runs} run(s) of ${options.duration} s, ${options.connections} connections, ${rate(options.animals)} ` +
      `animals; PostgreSQL: ${options.postgres === undefined ? 'none' : new URL(options.postgres).host}.`,
    `- The service: \`node ${startArguments(ROOT).join(' ')}\`, as shipped` +
      `${baseline === undefined ? '' : `; beside it the ${baseline.name}: ${baseline.subject}`}. How: bench/README.md.`,
    workloadTables(main),
    '## The service against the others',
    'The median of the per-run ratios (each run of the service over the other target\'s in the same minutes), and ' +
      'their range: req/s above 1.00×, the service serves more; p99 and CPU/req below, it is faster or spends less.',
    ratios(main, 'req/s', (m) => m.reqPerSec), ratios(main, 'p99', (m) => m.p99Ms),
    ratios(main, 'CPU per request', (m) => m.cpuUs)
  ]

  const scale: Measurement[] = []
  if (options.scale) {
    const sizes = options.smoke ? [200, 2000] : [10_000, 1_000_000, 10_000_000]
    const [sized, fills]: [Entry[], string[]] = [[], []]
    for (const database of options.postgres === undefined ? ['SQLite'] : ['SQLite', 'PostgreSQL']) {
      for (const animals of sizes) {
        say(`scale: petstore seed of ${animals} animals on ${database}`)
        const started = await start({ name: `${database} ${animals}`, sqlite: database === 'SQLite', animals })
        const { target, file, seconds } = started
        // petstore seed closes the file, and with it checkpoints its WAL: the file alone holds the animals.
        const bytes = file === undefined ? '' : `, a file of ${mib(statSync(file).size)}`
        fills.push(`- ${target.name}: seeded in ${seconds.toFixed(1)} s${bytes}`)
        const cursors = await deepCursors(target.origin, animals, 1000)
        sized.push({ ...started, base: `${database} ${sizes.at(-1)!}`, cursors })
      }
    }
    scale.push(...await race('scale: ', sized, SCALE_WORKLOADS))
    sections.push('## The scale curve', 'The service alone, filled by `petstore seed` (timed below), every size ' +
      'started afresh for each run and measured in turn within it; then p50 at the largest size ÷ at each other.',
    fills.join('\n'), workloadTables(scale), ratios(scale, 'p50', (m) => m.p50Ms))
  }
  const failed = [...main, ...scale].filter((measurement) => measurement.failed > 0)
  for (const { target, workload, failed: count } of failed) say(`${target} failed ${count} requests on ${workload}`)
  return { report: sections.join('\n\n') + '\n' + smoked, code: failed.length === 0 ? 0 : 1 }
}

// `--overload` is a bench of its own (overload.ts) on the same targets and results.
const argv = process.argv.slice(2)
const overloadRun = argv.includes('--overload')
let runBench: (work: string) => Promise<{ report: string, code: number }>
try {
  runBench = overloadRun
    ? overload.bind(undefined, parseOverloadOptions(argv.filter((arg) => arg !== '--overload')))
    : bench.bind(undefined, parseOptions(argv))
} catch (err) {
  process.stderr.write(`bench: ${(err as Error).message} (flags: bench/README.md)\n`)
  process.exit(2)
}
const work = mkdtempSync(join(tmpdir(), 'petstore-bench-'))
process.once('SIGINT', () => { cleanUp().finally(() => process.exit(130)) })
let code = 1
try {
  const result = await runBench(work)
  code = result.code
  process.stdout.write(result.report)
  const results = argv.includes('--smoke') ? join(work, 'results') : join(ROOT, 'bench/results')
  mkdirSync(results, { recursive: true })
  writeFileSync(join(results, `${overloadRun ? 'overload-' : ''}latest.md`), result.report)
} catch (err) {
  process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`)
} finally {
  await cleanUp()
  if (code === 0) rmSync(work, { recursive: true, force: true })
  else process.stderr.write(`bench: logs and data kept in ${work}\n`)
}
process.exitCode = code
