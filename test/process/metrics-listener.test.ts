import assert from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { AUTH } from '../support/helper.js'
import { runCli } from '../support/cli.js'
import { freePort, freePorts, startCli } from '../support/process.js'

describe('petstore serve: the metrics listener', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-metrics-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('serves /metrics on METRICS_PORT, not on the API port, and closes it on SIGTERM', async () => {
    const [port, metricsPort] = await freePorts(2)
    const cli = startCli(['serve'], { PORT: String(port), METRICS_PORT: String(metricsPort), DATABASE_URL: `sqlite:${join(dir, 'one.db')}`, PETSTORE_API_KEYS: TEST_KEY })
    try {
      await cli.listening(1)
      assert.equal((await fetch(`http://127.0.0.1:${port}/v1/pets/1`, { headers: AUTH })).status, 404)
      const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      assert.equal(scrape.status, 200)
      assert.match(await scrape.text(), /^petstore_http_requests_total\{operation="getPet",status="404"\} 1$/m)
      const onTheApiPort = await fetch(`http://127.0.0.1:${port}/metrics`)
      assert.equal(onTheApiPort.status, 404)
      assert.equal((await onTheApiPort.json() as { code: string }).code, 'not_found')
    } finally {
      cli.child.kill('SIGTERM')
    }
    assert.equal(await cli.exited, 0)
    await assert.rejects(fetch(`http://127.0.0.1:${metricsPort}/metrics`), 'the metrics listener is closed')
  })

  it('opens no metrics listener with METRICS_PORT=0', async () => {
    const port = await freePort()
    const cli = startCli(['serve', '--metrics-port', '0'], { PORT: String(port), DATABASE_URL: `sqlite:${join(dir, 'off.db')}`, PETSTORE_API_KEYS: TEST_KEY })
    try {
      await cli.listening(1)
      const line = JSON.parse(cli.stdout().split('\n').find((text) => text.includes('"msg":"listening"'))!) as { metrics?: string }
      assert.equal(line.metrics, undefined)
    } finally {
      cli.child.kill('SIGTERM')
    }
    assert.equal(await cli.exited, 0)
  })

  for (const [env, args, message] of [
    [{ METRICS_PORT: '70000' }, [], 'METRICS_PORT: must be an integer from 0 to 65535'],
    [{}, ['--metrics-port', 'x'], '--metrics-port: must be an integer from 0 to 65535'],
    [{ METRICS_HOST: 'bad host' }, [], 'METRICS_HOST: must be a host name or an IP address']
  ] as const) {
    it(`stops start-up with one line for ${JSON.stringify(env)} ${args.join(' ')}`, async () => {
      const result = await runCli(['serve', ...args], { cwd: dir, env: { ...env, PETSTORE_API_KEYS: TEST_KEY } })
      assert.equal(result.code, 1)
      assert.equal(result.stderr, `petstore: ${message}\n`)
    })
  }

  it('stops start-up with one line naming the setting when the metrics port is taken, with one process or several', async () => {
    const metricsPort = await freePort()
    const holder = createServer().listen(metricsPort, '127.0.0.1')
    await once(holder, 'listening')
    try {
      const env = { PETSTORE_API_KEYS: TEST_KEY, DATABASE_URL: `sqlite:${join(dir, 'taken.db')}` }
      const [single, workers, fromFlag] = await Promise.all([
        runCli(['serve'], { cwd: dir, env: { ...env, PORT: String(await freePort()), METRICS_PORT: String(metricsPort) } }),
        runCli(['serve'], { cwd: dir, env: { ...env, PORT: String(await freePort()), METRICS_PORT: String(metricsPort), WORKERS: '2' } }),
        runCli(['serve', '--metrics-port', String(metricsPort)], { cwd: dir, env: { ...env, PORT: String(await freePort()) } })
      ])
      for (const [result, name] of [[single, 'METRICS_PORT'], [workers, 'METRICS_PORT'], [fromFlag, '--metrics-port']] as const) {
        assert.equal(result.code, 1, name)
        assert.equal(result.stderr, `petstore: ${name}: ${metricsPort} is already in use on 127.0.0.1\n`)
      }
    } finally {
      holder.close()
    }
  })
})
