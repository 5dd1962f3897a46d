import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { openStore } from '../../src/store/open-store.js'

/** The threads of this process, as Linux lists them. */
const threads = (): number => readdirSync('/proc/self/task').length

describe('sqlite: the writer thread', { skip: existsSync('/proc/self/task') ? false : 'needs /proc/self/task (Linux)' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-writer-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('starts with the first create: a store that only reads runs no extra thread', async () => {
    const before = threads()
    const store = await openStore(`sqlite:${join(dir, 'pets.db')}`)
    try {
      await store.migrate()
      await store.listPets({ limit: 20 })
      await store.findPetJson(1)
      assert.equal(threads(), before, 'no thread after open, migrate and reads')
      await store.createPets([{ pet: { name: 'Rex', categoryId: 3, status: 'available' } }], 60_000)
      assert.ok(threads() > before, 'the writer thread runs once a create came')
    } finally {
      await store.close()
    }
  })
})
