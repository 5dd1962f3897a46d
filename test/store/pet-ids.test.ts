import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { INT64_MAX, toInt64 } from '../../src/schemas/kinds.js'
import { AppError } from '../../src/domain/errors.js'
import { backends, createTestDatabase, openMigratedStore, useTestStore } from '../helper.js'

const NO_ID_LEFT = new AppError('unavailable', 'no id is left for a new animal: 9223372036854775807, the highest, is taken', { 'retry-after': '3600' })
const newPet = (name: string) => ({ name, categoryId: 1, status: 'available' as const })

for (const backend of backends()) {
  describe(`${backend.name} store: ids of new animals at the end of int64`, { skip: backend.skip }, () => {
    const fixture = useTestStore(backend.name)

    const ids = async (): Promise<bigint[]> => (await fixture.store.listPets({ limit: 100 })).map((pet) => BigInt(pet.id))

    it('gives the last id, 2^63 - 1, then refuses creates and seeds with unavailable, never a random id below', async () => {
      await fixture.store.importPets([{ id: 5, ...newPet('low') }, { id: toInt64(INT64_MAX - 1n), ...newPet('high') }])
      const [last] = await fixture.store.createPets([{ pet: newPet('last') }], 60_000)
      assert.deepEqual(last, { kind: 'created', pet: { id: INT64_MAX, ...newPet('last') } })

      await assert.rejects(fixture.store.createPets([{ pet: newPet('one too many') }], 60_000), (err) => {
        assert.deepEqual(err, NO_ID_LEFT)
        assert.deepEqual((err as AppError).headers, { 'retry-after': '3600' }, 'retrying soon does not help')
        return true
      })
      await assert.rejects(fixture.store.insertPets([newPet('seeded')]), (err) => { assert.deepEqual(err, NO_ID_LEFT); return true })
      assert.deepEqual(await ids(), [5n, INT64_MAX - 1n, INT64_MAX])
    })

    it('refuses a whole seed or create batch when fewer ids are left than it needs, and leaves those ids to a smaller one', async () => {
      const other = await createTestDatabase(backend.name)
      const fresh = await openMigratedStore(other)
      try {
        await fresh.importPets([{ id: toInt64(INT64_MAX - 2n), ...newPet('high') }])
        await assert.rejects(fresh.insertPets([newPet('a'), newPet('b'), newPet('c')]), (err) => { assert.deepEqual(err, NO_ID_LEFT); return true })
        await assert.rejects(fresh.createPets([{ pet: newPet('a') }, { pet: newPet('b') }, { pet: newPet('c') }], 60_000), (err) => { assert.deepEqual(err, NO_ID_LEFT); return true })
        assert.deepEqual((await fresh.listPets({ limit: 10 })).map((pet) => BigInt(pet.id)), [INT64_MAX - 2n])
        await fresh.insertPets([newPet('d')])
        await fresh.createPets([{ pet: newPet('e') }], 60_000)
        assert.deepEqual((await fresh.listPets({ limit: 10 })).map((pet) => BigInt(pet.id)), [INT64_MAX - 2n, INT64_MAX - 1n, INT64_MAX])
      } finally {
        await fresh.close()
        await other.drop()
      }
    })
  })
}
