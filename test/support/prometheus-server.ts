/**
 * Debian's `prometheus` binary, started by a test on a config and data folder of its own: it
 * scrapes one metrics listener every second, evaluates deploy/prometheus's rules every second,
 * and answers PromQL over its HTTP API.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT } from './constants.js'
import { freePort } from './process.js'

export const RULES_FILE = join(ROOT, 'deploy/prometheus/petstore.rules.yml')

export interface Sample { metric: Record<string, string>, value: [number, string] }
export interface ActiveAlert { labels: Record<string, string>, state: 'pending' | 'firing' }

export interface PrometheusServer {
  origin: string
  /** An instant query's samples; throws on a query Prometheus refuses. */
  query: (expr: string) => Promise<Sample[]>
  /** Alerts pending or firing now. */
  alerts: () => Promise<ActiveAlert[]>
  stop: () => Promise<void>
}

async function getJson<T> (url: string): Promise<T> {
  const body = await (await fetch(url)).json() as { status: string, data: T, error?: string }
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? body.status}`)
  return body.data
}

/** @example const prometheus = await startPrometheus('127.0.0.1:9464') */
export async function startPrometheus (prometheusPath: string, target: string): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-prometheus-'))
  const config = join(dir, 'prometheus.yml')
  writeFileSync(config, [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    `rule_files: [${JSON.stringify(RULES_FILE)}]`,
    'scrape_configs:',
    '  - job_name: petstore',
    `    static_configs: [{ targets: [${JSON.stringify(target)}] }]`
  ].join('\n'))
  const port = await freePort()
  const child: ChildProcess = spawn(prometheusPath, [
    `--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  let output = ''
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const origin = `http://127.0.0.1:${port}`
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
    rmSync(dir, { recursive: true, force: true })
  }
  for (let waited = 0; ; waited += 100) {
    if (child.exitCode !== null || waited > 20_000) {
      await stop()
      throw new Error(`prometheus did not start: ${output}`)
    }
    try {
      if ((await fetch(`${origin}/-/ready`)).status === 200) break
    } catch {}
    await sleep(100)
  }
  return {
    origin,
    query: async (expr) => (await getJson<{ result: Sample[] }>(`${origin}/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    alerts: async () => (await getJson<{ alerts: ActiveAlert[] }>(`${origin}/api/v1/alerts`)).alerts,
    stop
  }
}
