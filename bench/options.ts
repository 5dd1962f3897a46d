/**
 * The bench's flags, parsed once into frozen options. A bad flag is one line
 * on stderr and exit code 2 (bench/run.ts).
 */
import { parseArgs } from 'node:util'
import { WORKLOADS, type Workload } from './workloads.js'

export interface BenchOptions {
  duration: number
  warmup: number
  runs: number
  connections: number
  workloads: readonly Workload[]
  /** Animals in the database of the main comparison. */
  animals: number
  jsonServer: boolean
  /** The peers (bench/peers/) in the main comparison; the pg peer and the service on PostgreSQL only with `postgres`. */
  peers: boolean
  scale: boolean
  sizes: readonly number[]
  workers: boolean
  /** The service with traces on (every request sampled, exported to a local sink) against off. */
  tracing: boolean
  /** The feature-cost steps on get and create (bench/feature-costs.ts); kept in a smoke run. */
  costs: boolean
  deployments: boolean
  /** The PostgreSQL server of --deployments and the main comparison's PostgreSQL targets (--postgres, else TEST_DATABASE_URL); undefined skips them. */
  postgres: string | undefined
  /** Another build of the service to measure beside this one (--baseline), a commit-ish; kept in a smoke run. */
  baseline: string | undefined
  smoke: boolean
  load: 'wrk' | 'autocannon' | undefined
  help: boolean
}

export class OptionsError extends Error {
  override name = 'OptionsError'
}

export const USAGE = `Usage: npm run bench -- [options]

  --duration S        measured seconds per run (default 10)
  --warmup S          warm-up seconds before each measured run (default 2)
  --runs N            runs of each target and workload; medians are reported (default 2)
  --connections N     concurrent connections (default 50)
  --only W,W          workloads among ${WORKLOADS.join(', ')} (default all)
  --scale             adds the scale curve: list, deep-cursor list and get at each size
  --sizes N,N         sizes of the scale curve (default 10000,1000000,10000000)
  --workers           adds WORKERS=2 against WORKERS=1
  --tracing           adds the service with traces on (every request sampled, OTLP/HTTP to a local sink) against off
  --costs             adds what each feature costs: the ceiling's get and create with the service's features added one at a time
  --deployments       adds the deployment shapes: one process, WORKERS=2, one and two instances on PostgreSQL
  --postgres URL      the PostgreSQL server of the service and the pg peer in the main comparison, and of --deployments
                      (default TEST_DATABASE_URL; neither: those targets and shapes are skipped)
  --baseline COMMIT   adds that commit's build of the service as a target, beside this one (its ratios in the report)
  --load TOOL         wrk or autocannon (default wrk when /usr/bin/wrk exists)
  --smoke             1 s runs, 0.5 s warm-up, 1 run, 200 animals, no json-server, no peers; report to a temporary directory
  --help              this text
`

function positive (flag: string, raw: string | undefined, fallback: number, integer: boolean, zero = false): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw) || (value === 0 && !zero) || (integer && !Number.isInteger(value))) {
    throw new OptionsError(`--${flag}: must be a ${zero ? 'number of 0 or more' : integer ? 'positive integer' : 'positive number'}`)
  }
  return value
}

function workloadsOf (raw: string | undefined): Workload[] {
  if (raw === undefined) return [...WORKLOADS]
  const names = raw.split(',').map((name) => name.trim())
  for (const name of names) {
    if (!(WORKLOADS as readonly string[]).includes(name)) throw new OptionsError(`--only: ${name} is not one of ${WORKLOADS.join(', ')}`)
  }
  return WORKLOADS.filter((workload) => names.includes(workload))
}

/**
 * Parses the command line (after `npm run bench --`); `env` gives TEST_DATABASE_URL.
 * @throws OptionsError `--runs: must be a positive integer`
 * @example parseBenchOptions(['--runs', '3', '--only', 'list,get']).workloads // ['list', 'get']
 */
export function parseBenchOptions (argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  let values
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        duration: { type: 'string' },
        warmup: { type: 'string' },
        runs: { type: 'string' },
        connections: { type: 'string' },
        only: { type: 'string' },
        scale: { type: 'boolean', default: false },
        sizes: { type: 'string' },
        workers: { type: 'boolean', default: false },
        tracing: { type: 'boolean', default: false },
        costs: { type: 'boolean', default: false },
        deployments: { type: 'boolean', default: false },
        postgres: { type: 'string' },
        baseline: { type: 'string' },
        load: { type: 'string' },
        smoke: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false }
      }
    }))
  } catch (err) {
    throw new OptionsError((err as Error).message)
  }
  if (values.load !== undefined && values.load !== 'wrk' && values.load !== 'autocannon') {
    throw new OptionsError('--load: must be wrk or autocannon')
  }
  if (values.postgres !== undefined && !/^postgres(ql)?:\/\//.test(values.postgres)) {
    throw new OptionsError('--postgres: must be a postgres:// URL')
  }
  const sizes = (values.sizes ?? '10000,1000000,10000000').split(',').map((size) => positive('sizes', size.trim(), 0, true))
  const smoke = values.smoke
  return Object.freeze({
    duration: positive('duration', values.duration, smoke ? 1 : 10, false),
    warmup: positive('warmup', values.warmup, smoke ? 0.5 : 2, false, true),
    runs: positive('runs', values.runs, smoke ? 1 : 2, true),
    connections: positive('connections', values.connections, 50, true),
    workloads: Object.freeze(workloadsOf(values.only)),
    animals: smoke ? 200 : 10_000,
    // The smoke run checks the harness, not the peers: no json-server, no peers, no scale, no workers, no tracing, no deployments.
    jsonServer: !smoke,
    peers: !smoke,
    scale: values.scale && !smoke,
    sizes: Object.freeze(sizes),
    workers: values.workers && !smoke,
    tracing: values.tracing && !smoke,
    costs: values.costs,
    deployments: values.deployments && !smoke,
    // An empty variable counts as unset, as an unset one would in a shell test.
    postgres: values.postgres ?? (env.TEST_DATABASE_URL === '' ? undefined : env.TEST_DATABASE_URL),
    baseline: values.baseline,
    smoke,
    load: values.load as BenchOptions['load'],
    help: values.help
  })
}
