import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backends, POSTGRES_SKIPPED, startTestServer, type TestServer } from '../support/helper.js'

/** The value of an unlabelled metric in the listener's exposition, or undefined when it has no series. */
async function scraped (server: TestServer, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${server.metrics.origin}/metrics`)).text()
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}

if (process.env.TEST_DATABASE_URL === undefined) console.log(POSTGRES_SKIPPED)

for (const backend of backends('sqlite', 'postgres')) {
  describe(`${backend.name}: the store gauges on the metrics listener`, () => {
    let server: TestServer
    before(async () => { server = await startTestServer({ backend: backend.name }) })
    after(async () => { await server?.close() })

    it('exports the pool\'s waiting clients, 0 when idle', async () => {
      assert.equal(await scraped(server, 'petstore_store_pool_waiting_clients'), 0)
    })

    if (backend.name === 'sqlite') {
      it('exports the last backup, or the database\'s creation before any', async () => {
        const created = (await server.store.lastBackupAt())!.getTime() / 1000
        assert.ok(Math.abs(created - Date.now() / 1000) < 60, 'created within the minute')
        assert.equal(await scraped(server, 'petstore_backup_last_success_timestamp_seconds'), created)
        const record = await server.store.backup!(`${server.database.url.slice('sqlite:'.length)}.backup`)
        assert.equal(await scraped(server, 'petstore_backup_last_success_timestamp_seconds'), record.takenAt.getTime() / 1000)
      })
    } else {
      it('exports no backup series: pg_dump\'s runs are not the service\'s', async () => {
        assert.equal(await scraped(server, 'petstore_backup_last_success_timestamp_seconds'), undefined)
      })
    }
  })
}
