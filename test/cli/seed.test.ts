import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { PetstoreClient } from '@petstore/client'
import { compileSchema } from '../../src/schemas/components.js'
import { Pet } from '../../src/schemas/pets.js'
import { TEST_KEY } from '../support/constants.js'
import { backends, createTestDatabase, exportedLines, startTestServer, type TestDatabase } from '../support/helper.js'
import { runCli, runCliOnTerminal } from '../support/cli.js'

const checkPet = compileSchema(Pet)

/** Every animal of the database, as `petstore export` writes them, read in this process (export has tests of its own). */
async function exportedPets (url: string): Promise<Pet[]> {
  return (await exportedLines(url)).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Pet)
}

async function seed (url: string, ...args: string[]): Promise<void> {
  const result = await runCli(['seed', ...args, '--database-url', url])
  assert.equal(result.code, 0, result.stderr)
  assert.equal(result.stderr, '', 'nothing extra in a pipe')
  assert.equal(result.stdout, '')
}

const withoutId = ({ id, ...rest }: Pet): Omit<Pet, 'id'> => rest

describe('petstore seed: help and bad input', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-cli-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('shows --help with --count and an example', async () => {
    const help = await runCli(['seed', '--help'])
    assert.equal(help.code, 0)
    assert.match(help.stdout, /Usage: petstore seed \[options\]/)
    assert.match(help.stdout, /--count <n>/)
    assert.match(help.stdout, /--batch-size/)
    assert.match(help.stdout, /Example:\n {2}petstore seed --count/)
  })

  for (const count of ['0', '-1', 'abc', '1e3', '100000001', '1.5', '']) {
    it(`refuses --count ${JSON.stringify(count)} in one line, exit code 1, and loads nothing`, async () => {
      const url = `sqlite:${join(dir, 'refused.db')}`
      const result = await runCli(['seed', '--count', count, '--database-url', url])
      assert.equal(result.code, 1)
      assert.equal(result.stderr, 'petstore: --count: must be an integer from 1 to 100000000\n')
      assert.deepEqual(await exportedPets(url), [])
    })
  }

  it('refuses a missing --count and a bad --batch-size or --seed', async () => {
    const url = `sqlite:${join(dir, 'refused.db')}`
    const missing = await runCli(['seed', '--database-url', url])
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /required option '--count <n>' not specified/)
    const batch = await runCli(['seed', '--count', '10', '--batch-size', '0', '--database-url', url])
    assert.equal(batch.stderr, 'petstore: --batch-size: must be an integer from 1 to 100000\n')
    const seedValue = await runCli(['seed', '--count', '10', '--seed', '4294967296', '--database-url', url])
    assert.equal(seedValue.stderr, 'petstore: --seed: must be an integer from 0 to 4294967295\n')
    assert.deepEqual(await exportedPets(url), [])
  })
})

for (const backend of backends()) {
  describe(`${backend.name}: petstore seed`, { skip: backend.skip }, () => {
    let database: TestDatabase
    before(async () => { database = await createTestDatabase(backend.name) })
    after(async () => { await database.drop() })

    it('adds exactly --count valid animals with ids 1..N and every status, quietly in a pipe', async () => {
      await seed(database.url, '--count', '1000', '--batch-size', '333')
      const pets = await exportedPets(database.url)
      assert.deepEqual(pets.map((pet) => pet.id), Array.from({ length: 1000 }, (_, i) => i + 1))
      for (const pet of pets) {
        assert.ok(checkPet.Check(pet), JSON.stringify(pet))
        assert.match(pet.name, /^[A-Z][a-z]+ [0-9]{1,3}$/)
        assert.ok(pet.categoryId >= 1 && pet.categoryId <= 1000)
      }
      assert.deepEqual(new Set(pets.map((pet) => pet.status)), new Set(['available', 'pending', 'sold']))
    })

    it('seeding again adds as many with new ids, the same animals for the same --seed', async () => {
      await seed(database.url, '--count', '1000')
      const pets = await exportedPets(database.url)
      assert.deepEqual(pets.map((pet) => pet.id), Array.from({ length: 2000 }, (_, i) => i + 1))
      assert.deepEqual(pets.slice(1000).map(withoutId), pets.slice(0, 1000).map(withoutId))
    })

    it('takes ids after those created through the API, and another --seed gives other animals', async () => {
      const server = await startTestServer({ backend: backend.name, database })
      try {
        const client = new PetstoreClient({ baseUrl: server.api, apiKey: TEST_KEY })
        assert.equal((await client.createPet({ name: 'through the API', categoryId: 1 })).id, 2001)
        await seed(database.url, '--count', '10', '--seed', '2')
        assert.equal((await client.createPet({ name: 'after the seed', categoryId: 1 })).id, 2012)
      } finally {
        await server.close()
      }
      const pets = await exportedPets(database.url)
      assert.deepEqual(pets.map((pet) => pet.id), Array.from({ length: 2012 }, (_, i) => i + 1))
      assert.notDeepEqual(pets.slice(2001, 2011).map(withoutId), pets.slice(0, 10).map(withoutId))
    })
  })
}

for (const backend of backends()) {
  describe(`${backend.name}: petstore seed once an import took the last id`, { skip: backend.skip }, () => {
    let database: TestDatabase
    before(async () => { database = await createTestDatabase(backend.name) })
    after(async () => { await database.drop() })

    it('stops with one line, exit code 1, and adds no animal with a random id', async () => {
      const imported = '{"id":9223372036854775805,"name":"Rex","categoryId":1,"status":"sold"}\n'
      assert.equal((await runCli(['import', '-', '--database-url', database.url], { input: imported })).code, 0)
      await seed(database.url, '--count', '2', '--batch-size', '1')
      const result = await runCli(['seed', '--count', '5', '--batch-size', '2', '--database-url', database.url])
      assert.equal(result.code, 1)
      assert.equal(result.stderr, 'petstore: no id is left for a new animal: 9223372036854775807, the highest, is taken; nothing was added\n')
      const again = await runCli(['seed', '--count', '1', '--database-url', database.url])
      assert.equal(again.code, 1)
      const exported = await exportedLines(database.url)
      assert.deepEqual([...exported.matchAll(/^\{"id":(\d+),/gm)].map((match) => match[1]), ['9223372036854775805', '9223372036854775806', '9223372036854775807'])
    })
  })
}

describe('petstore seed on a terminal', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-cli-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  // Speed is measured by hand (docs/cli.md), never asserted here: the machine may be busy.
  it('shows a progress bar and reports the rate', async () => {
    const result = await runCliOnTerminal(['seed', '--count', '50000', '--database-url', `sqlite:${join(dir, 'many.db')}`])
    assert.equal(result.code, 0, result.stdout)
    assert.match(result.stdout, /seeding \[[█░]+\] 100% \| 50000 animals/)
    assert.match(result.stdout, /seeded 50000 animals in [0-9.]+ s \([0-9]+ a second\)/)
  })
})
