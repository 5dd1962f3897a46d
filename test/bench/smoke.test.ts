/**
 * The bench must keep working: `npm run bench -- --smoke` starts the service and every peer,
 * each answers every workload for half a second, the overload run's generator loads the
 * service closed and open loop (no quota), and the report renders. It builds no worktree and
 * asserts no speed: a benchmark is never a test.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { describe, it } from 'node:test'
import { ROOT } from '../support/constants.js'

describe('npm run bench -- --smoke', () => {
  it('reports every workload for the service and each peer, none failing a request', { timeout: 90_000 }, async () => {
    const child = spawn('npm', ['run', '--silent', 'bench', '--', '--smoke'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    const code = await new Promise((resolve) => child.on('close', resolve))
    assert.equal(code, 0, `the smoke run failed:\n${stderr}`)

    const postgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ''
    const targets = ['service', 'Fastify app, SQLite', 'node:http + SQLite', ...(postgres ? ['service, PostgreSQL', 'Fastify app, pg', 'node:http + pg'] : [])]
    for (const workload of ['list', 'list-status', 'get', 'create']) {
      const section = stdout.split('\n### ').find((part) => part.startsWith(`${workload}: `)) ?? ''
      for (const target of targets) {
        const row = section.split('\n').find((line) => line.startsWith(`| ${target} |`))
        assert.ok(row !== undefined, `no ${target} row for ${workload} in:\n${stdout}`)
        const [reqPerSec, , , cpu, , failed] = row.split('|').slice(2, 8).map((cell) => cell.trim())
        assert.ok(Number(reqPerSec!.replaceAll(',', '')) > 0, `${target} served no request on ${workload}`)
        assert.match(cpu!, /^[0-9.]+ µs$/)
        assert.equal(failed, '0')
      }
    }
    assert.match(stdout, /## The service against the others/)

    const overload = stdout.split('\n## Overload smoke: ')[1] ?? ''
    for (const level of ['capacity (closed loop)', '0.8×']) {
      const row = overload.split('\n').find((line) => line.startsWith(`| service | ${level}`))
      assert.ok(row !== undefined, `no overload row for ${level} in:\n${stdout}`)
      const [goodput, , , , , timeouts, failed] = row.split('|').slice(3, 10).map((cell) => cell.trim())
      assert.ok(Number(goodput!.replaceAll(',', '')) > 0, `the service served nothing at ${level}: ${row}`)
      assert.match(timeouts!, /^[0-9.]+ %$/)
      assert.equal(failed, '0', `failed requests at ${level}: ${row}`)
    }
  })
})
