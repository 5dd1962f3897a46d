/**
 * The client's generated sources are what the server's schemas make now: a schema changed
 * without `npm run generate:client` fails here, not in a user's app.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { generateClientSources } from '../../../scripts/generate-client-types.js'
import { matchesSchema } from '../src/schema-check.js'
import type { NewPet, Pet } from '../src/index.js'
import { ROOT } from './server-support.js'

// Checked by `npm run lint` (tsc): each line under @ts-expect-error must be an error.
// @ts-expect-error the service assigns the id
export const withId: NewPet = { id: 42, name: 'Rex', categoryId: 3 }
// @ts-expect-error categoryId is required
export const withoutCategory: NewPet = { name: 'Rex' }
export const exact: Pet = { id: 9007199254740993n, name: 'Rex', categoryId: 3, status: 'sold' }

describe('the client\'s generated sources', () => {
  it('are what scripts/generate-client-types.ts writes from the server\'s schemas today', async () => {
    for (const [name, text] of Object.entries(await generateClientSources())) {
      assert.equal(readFileSync(join(ROOT, 'packages/client/src/generated', name), 'utf8'), text, `${name} is stale: run npm run generate:client`)
    }
  })

  it('check an animal as the server\'s schemas do, extra fields let through', () => {
    const pet = { id: 42, name: 'Rex', categoryId: 9223372036854775807n, status: 'available' }
    assert.equal(matchesSchema('Pet', pet), true)
    assert.equal(matchesSchema('Pet', { ...pet, colour: 'brown' }), true)
    assert.equal(matchesSchema('Pets', [pet, { ...pet, id: 43 }]), true)
    assert.equal(matchesSchema('Pet', { ...pet, id: 0 }), false)
    assert.equal(matchesSchema('Pet', { ...pet, id: 4.5 }), false)
    assert.equal(matchesSchema('Pet', { ...pet, id: '42' }), false)
    assert.equal(matchesSchema('Pet', { ...pet, status: 'lost' }), false)
    assert.equal(matchesSchema('Pet', { ...pet, name: ' \t' }), false)
    assert.equal(matchesSchema('Pet', { ...pet, name: 'a\u0000b' }), false)
    assert.equal(matchesSchema('Pet', { ...pet, name: '😀'.repeat(255) }), true, 'code points, not UTF-16 units')
    assert.equal(matchesSchema('Pet', { ...pet, name: 'x'.repeat(256) }), false)
    const { status: _, ...withoutStatus } = pet
    assert.equal(matchesSchema('Pet', withoutStatus), false)
    assert.equal(matchesSchema('Pets', {}), false)
    assert.equal(matchesSchema('Error', { code: 'not_found', message: 'petId: no animal with id 42', status: 404 }), true)
    assert.equal(matchesSchema('Error', { code: 'teapot', message: 'short and stout', status: 418 }), false)
  })
})
