import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { INT64_MAX, toInt64 } from '../../src/schemas/int64.js'
import { NoIdLeft } from '../../src/store/store-errors.js'
import { backends, createTestDatabase, openTestStore, useTestStore } from '../support/helper.js'

const NO_ID_LEFT = new NoIdLeft('no id is left for a new animal: 9223372036854775807, the highest, is taken')
const newPet = (name: string) => ({ name, categoryId: 1, status: 'available' as const })

for (const backend of backends()) {
  describe(`${backend.name} store: ids of new animals at the end of int64`, { skip: backend.skip }, () => {
    const fixture = useTestStore(backend.name)

    const ids = async (): Promise<bigint[]> => (await fixture.store.listPets({ limit: 100 })).map((pet) => BigInt(pet.id))

    it('gives the last id, 2^63 - 1, then refuses creates and seeds with unavailable, never a random id below', async () => {
      await fixture.store.importPets([{ id: 5, ...newPet('low') }, { id: toInt64(INT64_MAX - 1n), ...newPet('high') }])
      const last = await fixture.store.createPet(newPet('last'))
      assert.deepEqual(last, { kind: 'created', pet: { id: INT64_MAX, ...newPet('last') } })

      await assert.rejects(fixture.store.createPet(newPet('one too many')), (err) => { assert.deepEqual(err, NO_ID_LEFT); return true })
      await assert.rejects(fixture.store.insertPets([newPet('seeded')]), (err) => { assert.deepEqual(err, NO_ID_LEFT); return true })
      assert.deepEqual(await ids(), [5n, INT64_MAX - 1n, INT64_MAX])
    })

    it('refuses a whole seed batch when fewer ids are left than it needs, and leaves those ids to a smaller one', async () => {
      const other = await createTestDatabase(backend.name)
      const fresh = await openTestStore(other)
      try {
        await fresh.importPets([{ id: toInt64(INT64_MAX - 2n), ...newPet('high') }])
        await assert.rejects(fresh.insertPets([newPet('a'), newPet('b'), newPet('c')]), (err) => { assert.deepEqual(err, NO_ID_LEFT); return true })
        assert.deepEqual((await fresh.listPets({ limit: 10 })).map((pet) => BigInt(pet.id)), [INT64_MAX - 2n])
        await fresh.insertPets([newPet('d')])
        await fresh.createPet(newPet('e'))
        await assert.rejects(fresh.createPet(newPet('f')), (err) => { assert.deepEqual(err, NO_ID_LEFT); return true })
        assert.deepEqual((await fresh.listPets({ limit: 10 })).map((pet) => BigInt(pet.id)), [INT64_MAX - 2n, INT64_MAX - 1n, INT64_MAX])
      } finally {
        await fresh.close()
        await other.drop()
      }
    })
  })
}
