/**
 * The benchmark must keep working: a smoke run (`npm run bench -- --smoke`, a
 * second a workload) must produce a full report, with a baseline build too.
 * It asserts no speed figure: a benchmark is never a test.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const WORKLOADS = ['list', 'list-status', 'get', 'create']
const COST_ROWS = ['ceiling', 'none: the ceiling\'s work', '+ durable', '+ key-hash', '+ rate-limit', '+ headers', '+ metrics', '+ log']

interface Row { target: string, reqPerSec: number, cpuPerRequest: string, non2xx: string, cell: (name: string) => string }

/** The rows of the table under `### HEADING: …`, keyed by their first cell; cells found by their column's header. */
function rowsOf (report: string, heading: string): Map<string, Row> {
  const section = report.split('\n### ').find((part) => part.startsWith(`${heading}: `)) ?? ''
  const rows = new Map<string, Row>()
  let header: string[] = []
  for (const line of section.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
    if (cells[0] === 'target' || cells[0] === 'step') header = cells
    if (cells.length < 6 || cells === header || cells[0]!.startsWith('---')) continue
    const cell = (name: string): string => cells[header.indexOf(name)] ?? ''
    rows.set(cells[0]!, { target: cells[0]!, reqPerSec: Number(cell('req/s').replaceAll(',', '')), cpuPerRequest: cell('CPU/req'), non2xx: cell('non-2xx'), cell })
  }
  return rows
}

/** `npm run bench -- ARGS`, its exit code and its output. */
async function runBench (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, stdout, stderr }
}

describe('npm run bench -- --smoke', () => {
  it('reports each workload for the service and the ceiling, and the feature costs, with requests served and none failed', { timeout: 240_000 }, async () => {
    const { code, stdout, stderr } = await runBench(['--smoke', '--costs'])
    assert.equal(code, 0, `the smoke run failed:\n${stderr}`)

    assert.match(stdout, /^# Benchmark: /m)
    assert.match(stdout, /- Machine: .+ cores/)
    assert.match(stdout, /- Before each run the bench waits for a second .+: the busiest such second before the \d+ runs was \d+ % of a core/)
    for (const workload of WORKLOADS) {
      const rows = rowsOf(stdout, workload)
      for (const target of ['service', 'ceiling']) {
        const row = rows.get(target)
        assert.ok(row !== undefined, `no ${target} row for ${workload} in:\n${stdout}`)
        assert.ok(row.reqPerSec > 0, `${target} served no request on ${workload}`)
        assert.match(row.cpuPerRequest, /^[0-9.]+ µs$/, `${target}'s CPU time per request on ${workload}`)
      }
      assert.equal(rows.get('service')!.non2xx, '0', `the service failed requests on ${workload}`)
    }
    assert.match(stdout, /## Targets\n/)
    for (const workload of ['get', 'create']) {
      const rows = rowsOf(stdout, `${workload} (feature costs)`)
      for (const step of COST_ROWS) {
        const row = rows.get(step)
        assert.ok(row !== undefined, `no ${step} row in the feature costs of ${workload} in:\n${stdout}`)
        // A 1 s window of durable creates can fall inside one slow fsync of a busy disk: there, some step must serve.
        if (workload === 'get' || !step.startsWith('+')) assert.ok(row.reqPerSec > 0, `${step} served no request on ${workload}`)
        assert.equal(row.non2xx, '0', `${step} failed requests on ${workload}`)
      }
      const durableServed = COST_ROWS.filter((step) => step.startsWith('+')).some((step) => rows.get(step)!.reqPerSec > 0)
      assert.ok(durableServed, `no durable step served a request on ${workload}`)
    }
  })

  it('measures HEAD built in a worktree of its own beside the service, with its ratios, and removes the worktree', { timeout: 180_000 }, async () => {
    const { code, stdout, stderr } = await runBench(['--smoke', '--baseline', 'HEAD', '--only', 'get'])
    assert.equal(code, 0, `the smoke run failed:\n${stderr}`)

    const short = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim()
    const rows = rowsOf(stdout, 'get')
    const baseline = rows.get(`baseline (${short})`)
    assert.ok(baseline !== undefined, `no baseline row for get in:\n${stdout}`)
    assert.ok(baseline.reqPerSec > 0, 'the baseline served no request')
    assert.equal(baseline.non2xx, '0', 'the baseline failed requests')
    for (const column of ['req/s ÷ baseline', 'p99 ÷ baseline', 'RSS ÷ baseline']) {
      assert.match(rows.get('service')?.cell(column) ?? '', /^[0-9.]+×$/, `the service's ${column}`)
    }
    const tree = /git worktree of \S+ in (\S+)/.exec(stderr)?.[1]
    assert.ok(tree !== undefined, `the worktree is named on stderr:\n${stderr}`)
    assert.equal(existsSync(tree), false, `${tree} is removed`)
    assert.ok(!spawnSync('git', ['worktree', 'list'], { cwd: ROOT, encoding: 'utf8' }).stdout.includes(tree), 'git forgot the worktree')
  })
})
