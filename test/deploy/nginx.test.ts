/**
 * The service behind nginx as deploy/nginx/petstore.conf sets it up (docs/deployment.md#nginx):
 * keep-alive connections to the instances reused however long a client pauses, since the service
 * keeps its side open longer than nginx keeps its own; and a restart of every instance, one at a
 * time under creates that are never retried, failing nothing, though nginx's open-source build
 * checks no instance's health.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { startLoad } from '../support/failover-load.js'
import { createTestDatabase, JSON_AUTH, skippedFile, startTestServer, type TestDatabase, type TestServer } from '../support/helper.js'
import { nginxMissing, startNginx, type Nginx } from '../support/nginx.js'
import { freePort, freePorts, startServerProcess, type ServerProcess } from '../support/process.js'

const skip = nginxMissing()
if (skip !== false) skippedFile(`nginx tests skipped: ${skip}`)

describe('behind nginx: keep-alive connections to the service', { skip }, () => {
  let dir: string
  let server: TestServer
  let nginx: Nginx
  let accepted = 0
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-nginx-'))
    server = await startTestServer()
    server.app.server.on('connection', () => { accepted++ })
    nginx = await startNginx({ dir, port: await freePort(), instances: [new URL(server.origin).host] })
  })
  after(async () => {
    await nginx?.stop()
    await server?.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it('reuses one connection for creates sent after idle gaps of 7 s, longer than Node\'s default keeps one', { timeout: 30_000 }, async () => {
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) {
      if (i > 0) await sleep(7_000)
      const response = await fetch(`${nginx.origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: `after a gap ${i}`, categoryId: 1 }) })
      await response.arrayBuffer()
      statuses.push(response.status)
    }
    assert.deepEqual(statuses, [201, 201, 201], nginx.errors())
    assert.equal(accepted, 1, 'the service accepted one connection from nginx')
  })
})

describe('behind nginx: a restart of every instance under creates never retried', { skip }, () => {
  let dir: string
  let database: TestDatabase
  let nginx: Nginx
  let ports: number[]
  const instances: ServerProcess[] = []
  // The drain's delay: long enough for nginx to have used each idle connection it holds once more.
  const env = { SHUTDOWN_DELAY: '2' }
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-nginx-'))
    database = await createTestDatabase('sqlite')
    ports = await freePorts(2)
    for (const port of ports) instances.push(await startServerProcess(database.url, env, { port }))
    nginx = await startNginx({ dir, port: await freePort(), instances: ports.map((port) => `127.0.0.1:${port}`) })
  })
  after(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL')
    await nginx?.stop()
    await database?.drop()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it('answers every request 2xx while each instance drains, exits and starts again on its port', { timeout: 90_000 }, async () => {
    const load = startLoad([nginx.origin], { writersPerInstance: 8, retryCreates: false, probes: false, client: false })
    try {
      await sleep(1_000)
      for (const [n, port] of ports.entries()) {
        const old = instances[n]!
        old.child.kill('SIGTERM')
        assert.equal(await old.exited, 0)
        instances[n] = await startServerProcess(database.url, env, { port })
        // The recipe's fail_timeout: nginx takes the instance back in once it has passed.
        await sleep(6_000)
      }
    } finally {
      await load.stop()
    }
    const faults = load.answers.filter((answer) => answer.fault !== undefined || answer.status < 200 || answer.status >= 300)
    assert.ok(load.acknowledged.length > 100, `${load.acknowledged.length} creates acknowledged`)
    assert.deepEqual(faults.slice(0, 5).map((answer) => `${answer.kind}: ${answer.status} ${answer.fault ?? answer.body ?? ''}`), [], `${faults.length} of ${load.answers.length} failed\n${nginx.errors().slice(-2000)}`)
  })
})
