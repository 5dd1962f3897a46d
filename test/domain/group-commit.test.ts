import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PetCatalogue } from '../../src/domain/pets.js'
import type { IdempotencyClaim } from '../../src/store/store.js'
import { backends, useTestStore } from '../support/helper.js'

const caller = { keyName: 'test', nameHash: 'a'.repeat(64), scopes: new Set(['pets:write'] as const), rateLimit: undefined }

for (const backend of backends()) {
  describe(`${backend.name}: concurrent creates`, { skip: backend.skip }, () => {
    const fixture = useTestStore(backend.name)

    it('gives 300 concurrent creates distinct ids, each stored as answered', async () => {
      const catalogue = new PetCatalogue(fixture.store, await fixture.store.secret('cursor'))
      const created = await Promise.all(Array.from({ length: 300 }, (_, i) =>
        catalogue.createPet({ name: `pet ${i}`, categoryId: i + 1 }, caller)))
      const ids = created.map(({ pet }) => Number(pet.id))
      // One writer commits SQLite's creates in the order they came; PostgreSQL's run side by side.
      if (backend.name === 'sqlite') assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ids ascend in submission order')
      assert.equal(new Set(ids).size, 300)
      for (const [i, { pet, replayed }] of created.entries()) {
        assert.equal(replayed, false)
        assert.deepEqual(pet, { id: pet.id, name: `pet ${i}`, categoryId: i + 1, status: 'available' })
        assert.deepEqual(await fixture.store.findPet(pet.id), pet)
      }
    })

    it('creates once for a key sent three times at once, and gives the others that animal and its fingerprint', async () => {
      const claim = (fingerprint: string): IdempotencyClaim =>
        ({ scope: 'a'.repeat(64), key: 'twice-at-once', fingerprint, notBefore: new Date(Date.now() - 60_000) })
      const pet = (name: string) => ({ name, categoryId: 1, status: 'available' as const })
      const results = await Promise.all([
        fixture.store.createPet(pet('first'), claim('f1')), fixture.store.createPet(pet('bystander')),
        fixture.store.createPet(pet('first'), claim('f1')), fixture.store.createPet(pet('other'), claim('f2'))])
      const [bystander, ...keyed] = [results[1]!, results[0]!, results[2]!, results[3]!]
      assert.equal(bystander.kind, 'created')
      const winners = keyed.filter((result) => result.kind === 'created')
      assert.equal(winners.length, 1, 'one of the three creates')
      const winner = winners[0]!
      const fingerprintOf = (name: string): string => name === 'first' ? 'f1' : 'f2'
      for (const result of keyed.filter((r) => r !== winner)) {
        assert.deepEqual(result.kind === 'key_taken' && [result.fingerprint, result.pet], [fingerprintOf(winner.pet.name), winner.pet])
      }
      const later = await fixture.store.createPet(pet('first'), claim('f1'))
      assert.deepEqual(later.kind === 'key_taken' && later.pet.id, winner.pet.id)
    })

    it('takes a key whose record has expired as free, and records it anew', async () => {
      const claim = (notBefore: Date): IdempotencyClaim => ({ scope: 'b'.repeat(64), key: 'expiring', fingerprint: 'f', notBefore })
      const pet = { name: 'again', categoryId: 1, status: 'available' as const }
      const first = await fixture.store.createPet(pet, claim(new Date(Date.now() - 60_000)))
      const afterExpiry = await fixture.store.createPet(pet, claim(new Date(Date.now() + 1_000)))
      assert.equal(afterExpiry.kind, 'created')
      assert.notEqual(afterExpiry.pet.id, first.pet.id)
    })
  })
}
