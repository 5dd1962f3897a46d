import assert from 'node:assert/strict'
import { Agent, get as httpGet } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { AUTH, JSON_AUTH, backends, createTestDatabase, startTestServer, type TestDatabase } from '../support/helper.js'
import { listAll, type ListedPet as Pet } from '../support/list-pages.js'
import { startHalfSentCreate } from '../support/raw-http.js'
import { startServerProcess } from '../support/process.js'

interface Attempt { name: string, body: string, key: string | undefined, created: Pet | undefined }

const WRITERS = 8

/** Creates animals from WRITERS parallel loops until the service stops answering; `attempts` fills as they go. */
async function createUntilDown (origin: string, cycle: number, attempts: Attempt[]): Promise<void> {
  let alive = true
  await Promise.all(Array.from({ length: WRITERS }, async (_, writer) => {
    for (let i = 0; alive; i++) {
      const name = `cycle ${cycle} writer ${writer} #${i}`
      const attempt: Attempt = { name, body: JSON.stringify({ name, categoryId: cycle * 1000 + writer, status: 'pending' }), key: i % 2 === 0 ? `c${cycle}-w${writer}-${i}` : undefined, created: undefined }
      attempts.push(attempt)
      try {
        const response = await fetch(`${origin}/v1/pets`, { method: 'POST', headers: { ...JSON_AUTH, ...(attempt.key === undefined ? {} : { 'idempotency-key': attempt.key }) }, body: attempt.body })
        const text = await response.text()
        if (response.status === 201) attempt.created = JSON.parse(text) as Pet
      } catch {
        alive = false
      }
    }
  }))
}

for (const backend of backends()) {
  describe(`${backend.name}: SIGKILL under load`, { skip: backend.skip }, () => {
    let database: TestDatabase
    before(async () => { database = await createTestDatabase(backend.name) })
    after(async () => { await database.drop() })

    it('keeps every animal that got a 201, identical and never twice, over three kill-and-restart cycles', async () => {
      const confirmed: Pet[] = []
      let server = await startServerProcess(database.url)
      for (let cycle = 1; cycle <= 3; cycle++) {
        const attempts: Attempt[] = []
        const load = createUntilDown(server.origin, cycle, attempts)
        // Killed under load, once creates are committing: on a busy machine the first ones can take seconds.
        for (let waited = 0; !attempts.some((attempt) => attempt.created !== undefined) && waited < 30_000; waited += 50) await sleep(50)
        // A fifth of a second more: many creates committed to check, and WRITERS in flight at the kill.
        await sleep(200)
        server.child.kill('SIGKILL')
        assert.equal(await server.exited, 'SIGKILL')
        await load
        confirmed.push(...attempts.flatMap((attempt) => attempt.created === undefined ? [] : [attempt.created]))
        assert.ok(attempts.some((attempt) => attempt.created !== undefined), 'some creates succeeded before the kill')

        server = await startServerProcess(database.url)
        const stored = new Map((await listAll(`${server.origin}/v1/pets?limit=100`)).map((pet) => [pet.id, pet]))
        for (const pet of confirmed) assert.deepEqual(stored.get(pet.id), pet, `animal ${pet.id} answered 201 and must be there as it was`)
        const names = [...stored.values()].map((pet) => pet.name)
        assert.equal(new Set(names).size, names.length, 'no animal is stored twice')

        // Retrying the keyed creates replays what committed and creates what did not; none stays stuck on 409.
        for (const attempt of attempts.filter((a) => a.key !== undefined)) {
          const retry = await fetch(`${server.origin}/v1/pets`, { method: 'POST', headers: { ...JSON_AUTH, 'idempotency-key': attempt.key! }, body: attempt.body })
          assert.equal(retry.status, 201, await retry.clone().text())
          const pet = await retry.json() as Pet
          if (attempt.created !== undefined) {
            assert.equal(retry.headers.get('idempotent-replayed'), 'true')
            assert.deepEqual(pet, attempt.created)
          }
          if (attempt.created === undefined) confirmed.push(pet)
        }
        const after = (await listAll(`${server.origin}/v1/pets?limit=100`)).map((pet) => pet.name)
        assert.equal(new Set(after).size, after.length, 'retries created no duplicate')
      }
      server.child.kill('SIGKILL')
      await server.exited
      assert.ok(confirmed.length > 0)
    })
  })
}

describe('SIGTERM drains', () => {
  let database: TestDatabase
  before(async () => { database = await createTestDatabase('sqlite') })
  after(async () => { await database.drop() })

  it('completes the requests in flight at SIGTERM, then exits 0', async () => {
    const server = await startServerProcess(database.url)
    const slow = await startHalfSentCreate(server.origin, { name: 'in flight at SIGTERM', categoryId: 1 })
    server.child.kill('SIGTERM')
    await sleep(300)
    const response = await slow.finish()
    assert.equal(response.status, 201, response.body)
    assert.equal(await server.exited, 0, server.output())

    // Read back in this process: only the drain needed a process.
    const restarted = await startTestServer({ database })
    try {
      const pets = await listAll(`${restarted.origin}/v1/pets?limit=100`)
      assert.ok(pets.some((pet) => pet.name === 'in flight at SIGTERM'))
    } finally {
      await restarted.close()
    }
  })

  it('answers /readyz 503 and keeps serving during SHUTDOWN_DELAY, so a rolling restart loses nothing', async () => {
    const server = await startServerProcess(database.url, { SHUTDOWN_DELAY: '2' })
    assert.equal((await fetch(`${server.origin}/readyz`)).status, 200)
    const slow = await startHalfSentCreate(server.origin, { name: 'in flight during the delay', categoryId: 1 })
    server.child.kill('SIGTERM')
    await sleep(300)
    const ready = await fetch(`${server.origin}/readyz`)
    assert.equal(ready.status, 503)
    assert.equal((await ready.json() as { code: string }).code, 'unavailable')
    const during = await fetch(`${server.origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: 'sent while draining', categoryId: 1 }) })
    assert.equal(during.status, 201)
    const response = await slow.finish()
    assert.equal(response.status, 201, response.body)
    assert.equal(await server.exited, 0, server.output())
    assert.doesNotMatch(server.output(), /store unavailable/, 'a draining readyz is no store failure')
  })

  it('closes each connection after its response while draining, so keep-alive clients stop reusing it', async () => {
    const server = await startServerProcess(database.url, { SHUTDOWN_DELAY: '2' })
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const send = async (): Promise<{ reused: boolean, connection: string | undefined, status: number | undefined }> =>
      await new Promise((resolve, reject) => {
        const request = httpGet(`${server.origin}/v1/pets?limit=1`, { agent, headers: AUTH }, (response) => {
          response.resume()
          response.once('end', () => resolve({ reused: request.reusedSocket, connection: response.headers.connection, status: response.statusCode }))
        }).once('error', reject)
      })
    try {
      assert.deepEqual(await send(), { reused: false, connection: 'keep-alive', status: 200 })
      server.child.kill('SIGTERM')
      await sleep(300)
      assert.deepEqual(await send(), { reused: true, connection: 'close', status: 200 }, 'served on the open connection, which then closes')
      assert.deepEqual(await send(), { reused: false, connection: 'close', status: 200 }, 'a new connection during the delay')
    } finally {
      agent.destroy()
    }
    assert.equal(await server.exited, 0, server.output())
  })

  it('keeps draining through a second SIGTERM', async () => {
    const server = await startServerProcess(database.url, { SHUTDOWN_DELAY: '2' })
    const slow = await startHalfSentCreate(server.origin, { name: 'in flight at two SIGTERMs', categoryId: 1 })
    server.child.kill('SIGTERM')
    await sleep(300)
    server.child.kill('SIGTERM')
    await sleep(300)
    assert.equal((await fetch(`${server.origin}/v1/pets?limit=1`, { headers: AUTH })).status, 200, 'still serving after the second signal')
    const response = await slow.finish()
    assert.equal(response.status, 201, response.body)
    assert.equal(await server.exited, 0, server.output())
  })

  it('drains every worker with WORKERS=2 when the whole process group gets SIGTERM (each worker gets it twice)', async () => {
    const server = await startServerProcess(database.url, { WORKERS: '2', SHUTDOWN_DELAY: '1' }, { ownProcessGroup: true })
    try {
      const slow = await Promise.all([1, 2, 3, 4].map(async (i) => await startHalfSentCreate(server.origin, { name: `group drain ${i}`, categoryId: 1 })))
      process.kill(-server.child.pid!, 'SIGTERM')
      await sleep(300)
      assert.equal((await fetch(`${server.origin}/readyz`)).status, 503)
      assert.equal((await fetch(`${server.origin}/v1/pets?limit=1`, { headers: AUTH })).status, 200, 'still serving during the delay')
      for (const request of slow) {
        const response = await request.finish()
        assert.equal(response.status, 201, response.body)
      }
      assert.equal(await server.exited, 0, server.output())
    } finally {
      // Its workers are in its group, which a failed assertion would leave running.
      try { process.kill(-server.child.pid!, 'SIGKILL') } catch {}
    }
  })

  it('drains every worker with WORKERS=2: requests in flight complete, the primary exits 0', async () => {
    const server = await startServerProcess(database.url, { WORKERS: '2', SHUTDOWN_DELAY: '1' })
    const slow = await Promise.all([1, 2, 3, 4].map(async (i) => await startHalfSentCreate(server.origin, { name: `worker drain ${i}`, categoryId: 1 })))
    server.child.kill('SIGTERM')
    await sleep(300)
    assert.equal((await fetch(`${server.origin}/readyz`)).status, 503)
    for (const request of slow) {
      const response = await request.finish()
      assert.equal(response.status, 201, response.body)
    }
    assert.equal(await server.exited, 0, server.output())
  })
})
