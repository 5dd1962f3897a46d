import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY } from '../support/constants.js'
import { JSON_AUTH, backends, createTestDatabase, type TestDatabase } from '../support/helper.js'
import { listAll } from '../support/list-pages.js'
import { freePort, startCli, type CliProcess } from '../support/process.js'

const CREATES = 300

for (const backend of backends()) {
  describe(`${backend.name}: petstore serve with WORKERS=2 on one database`, { skip: backend.skip }, () => {
    let database: TestDatabase
    let cli: CliProcess
    let origin: string
    before(async () => {
      database = await createTestDatabase(backend.name)
      const port = await freePort()
      origin = `http://127.0.0.1:${port}`
      // MAX_QUEUE_DELAY off: 300 creates at once are a spike the stage may refuse in part; the subject is the workers' ids.
      cli = startCli(['serve'], { WORKERS: '2', PORT: String(port), DATABASE_URL: database.url, PETSTORE_API_KEYS: TEST_KEY, MAX_QUEUE_DELAY: 'off' })
      await cli.listening(2)
    })
    after(async () => {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL')
      await database.drop()
    })

    it(`answers 201 to ${CREATES} creates sent at once, with unique ids, each listed once`, async () => {
      const responses = await Promise.all(Array.from({ length: CREATES }, async (_, i) =>
        await fetch(`${origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: `pet ${i}`, categoryId: i + 1 }) })))
      const statuses = responses.map((response) => response.status)
      assert.deepEqual(statuses.filter((status) => status !== 201), [], 'every create answered 201')
      const ids = await Promise.all(responses.map(async (response) => (await response.json() as { id: number }).id))
      assert.equal(new Set(ids).size, CREATES)

      const listed = (await listAll(`${origin}/v1/pets?limit=100`)).map((pet) => pet.id)
      assert.deepEqual(listed, [...ids].sort((a, b) => a - b))
      assert.doesNotMatch(cli.stdout(), /SQLITE_BUSY|"level":50/)
    })

    it('runs two worker processes', () => {
      const pids = new Set([...cli.stdout().matchAll(/"pid":(\d+)[^\n]*"msg":"listening"/g)].map((match) => match[1]))
      assert.equal(pids.size, 2)
    })

    it('replaces a worker that dies while serving', async () => {
      const pid = /"pid":(\d+)[^\n]*"msg":"listening"/.exec(cli.stdout())![1]!
      process.kill(Number(pid), 'SIGKILL')
      await cli.listening(3)
      assert.match(cli.stderr(), new RegExp(`worker ${pid} exited with SIGKILL; starting another`))
      const response = await fetch(`${origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: 'after', categoryId: 1 }) })
      assert.equal(response.status, 201)
    })

    it('stops every worker gracefully on SIGTERM to the primary and exits 0', async () => {
      cli.child.kill('SIGTERM')
      assert.equal(await cli.exited, 0)
      assert.equal((cli.stdout().match(/"msg":"closed"/g) ?? []).length, 2)
    })
  })
}

describe('petstore serve with WORKERS=2 when a worker cannot start', () => {
  it('exits 1 with the worker\'s one-line error instead of forking again and again', async () => {
    const database = await createTestDatabase('sqlite')
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as { port: number }
    try {
      const cli = startCli(['serve'], { WORKERS: '2', PORT: String(port), DATABASE_URL: database.url, PETSTORE_API_KEYS: TEST_KEY })
      const timer = setTimeout(() => cli.child.kill('SIGKILL'), 20_000)
      const code = await cli.exited
      clearTimeout(timer)
      assert.equal(code, 1)
      assert.equal(cli.stderr(), `petstore: PORT: ${port} is already in use on 127.0.0.1\n`)
    } finally {
      taken.close()
      await database.drop()
    }
  })
})
