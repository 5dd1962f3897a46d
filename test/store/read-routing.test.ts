import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { routeReads, type StandbyReads } from '../../src/store/read-routing.js'
import type { Pet } from '../../src/schemas/pets.js'
import type { Store } from '../../src/store/store.js'

const REX: Pet = { id: 1, name: 'Rex', categoryId: 3, status: 'available' }
const OPTIONS = { standbyTimeoutMs: 100, restMs: 300 }

/** A database that answers `pets` and counts what it was asked. */
function fakeDatabase (pets: Pet[], behave: () => Promise<void> = async () => {}): StandbyReads & { asked: number } {
  const database = {
    asked: 0,
    async listPets () { database.asked++; await behave(); return pets },
    async findPet (id: Pet['id']) { database.asked++; await behave(); return pets.find((pet) => pet.id === id) },
    async close () {}
  }
  return database
}

function route (primary: StandbyReads, standby: StandbyReads): Store {
  return routeReads(primary as unknown as Store, standby, OPTIONS)
}

describe('read routing: the standby serves, never stale to the caller and never failing it', () => {
  it('reads the standby first and counts it', async () => {
    const primary = fakeDatabase([REX])
    const store = route(primary, fakeDatabase([REX]))
    assert.deepEqual(await store.listPets({ limit: 10 }), [REX])
    assert.deepEqual(await store.findPet(1), REX)
    assert.equal(primary.asked, 0)
    assert.deepEqual(await store.readCounts!(), { standby: 2, primary: 0, fallback: 0 })
  })

  it('asks the primary before answering that an animal is not there', async () => {
    const primary = fakeDatabase([REX])
    const store = route(primary, fakeDatabase([]))
    assert.deepEqual(await store.findPet(1), REX, 'created a moment ago, not yet on the standby')
    assert.equal(await store.findPet(2), undefined, 'on neither')
    assert.deepEqual(await store.readCounts!(), { standby: 0, primary: 2, fallback: 0 })
    // An empty page is the standby's answer: lists may lag (docs/deployment.md says by how much).
    assert.deepEqual(await store.listPets({ limit: 10 }), [])
  })

  for (const [what, behave] of [
    ['unreachable', async () => { throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }],
    ['in a recovery conflict (40001)', async () => { throw Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001' }) }],
    ['slower than its timeout', async () => { await sleep(1_000) }]
  ] as const) {
    it(`serves from the primary in the same request when the standby is ${what}, and leaves the standby alone a while`, async () => {
      const primary = fakeDatabase([REX])
      const standby = fakeDatabase([REX], behave)
      const store = route(primary, standby)
      const started = Date.now()
      assert.deepEqual(await store.findPet(1), REX)
      assert.ok(Date.now() - started < 400, 'within about the standby\'s timeout')
      assert.deepEqual(await store.listPets({ limit: 10 }), [REX])
      assert.equal(standby.asked, 1, 'left alone after its failure')
      assert.deepEqual(await store.readCounts!(), { standby: 0, primary: 1, fallback: 1 })
      await sleep(OPTIONS.restMs + 50)
      await store.listPets({ limit: 10 })
      assert.equal(standby.asked, 2, 'tried again after its rest')
    })
  }

  it('fails a read only when the primary fails too', async () => {
    const failing = async (): Promise<void> => { throw new Error('down') }
    const store = route(fakeDatabase([], failing), fakeDatabase([], failing))
    await assert.rejects(store.findPet(1), /down/)
  })
})
