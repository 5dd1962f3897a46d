import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseExactJson } from '../../src/client/exact-json.js'
import { PetCatalogue } from '../../src/domain/pets.js'
import type { CreateRequest } from '../../src/store/store.js'
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

    it('creates once for a key sent twice in one batch, and replays it to the second (or refuses another body)', async () => {
      const keyed = (name: string, fingerprint: string): CreateRequest =>
        ({ pet: { name, categoryId: 1, status: 'available' }, idempotency: { scope: 'a'.repeat(64), key: 'twice-in-a-batch', fingerprint } })
      const outcomes = await fixture.store.createPets(
        [keyed('first', 'f1'), { pet: { name: 'bystander', categoryId: 2, status: 'sold' } }, keyed('first', 'f1'), keyed('other', 'f2')], 60_000)
      assert.deepEqual(outcomes.map((outcome) => outcome.kind), ['created', 'created', 'replayed', 'key_reused'])
      const [first, , again] = outcomes as Array<{ pet: { id: unknown } }>
      assert.equal(again!.pet.id, first!.pet.id)
      const later = await fixture.store.createPets([keyed('first', 'f1')], 60_000)
      assert.deepEqual(later.map((outcome) => outcome.kind === 'replayed' && outcome.pet.id), [first!.pet.id])
    })
  })
}
