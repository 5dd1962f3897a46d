import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseExactJson } from '../../src/client/exact-json.js'
import { PetCatalogue } from '../../src/domain/pets.js'
import { backends, useTestStore } from '../helper.js'

const caller = { keyName: 'test', keyHash: 'a'.repeat(64) }

for (const backend of backends()) {
  describe(`${backend.name}: creates committed together`, { skip: backend.skip }, () => {
    const fixture = useTestStore(backend.name)

    it('gives 300 concurrent creates ascending ids in the order they came, each stored as answered', async () => {
      const catalogue = new PetCatalogue(fixture.store, await fixture.store.secret('cursor'))
      const created = await Promise.all(Array.from({ length: 300 }, (_, i) =>
        catalogue.createPet({ name: `pet ${i}`, categoryId: i + 1 }, caller)))
      const ids = created.map(({ pet }) => Number(pet.id))
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ids ascend in submission order')
      assert.equal(new Set(ids).size, 300)
      for (const [i, { pet, replayed }] of created.entries()) {
        assert.equal(replayed, false)
        assert.deepEqual(pet, { id: pet.id, name: `pet ${i}`, categoryId: i + 1, status: 'available' })
        assert.deepEqual(parseExactJson(await fixture.store.findPetJson(pet.id) ?? 'null'), pet)
      }
    })
  })
}
