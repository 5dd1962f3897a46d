import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import type { Pet } from '../../../src/schemas/pets.js'
import { openStore } from '../../../src/store/open-store.js'
import type { Store } from '../../../src/store/store.js'

const names = (page: readonly Pet[]): string[] => page.map((pet) => pet.name)

describe('sqlite: the page cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-pages-'))
  const path = join(dir, 'pets.db')
  let store: Store
  before(async () => {
    store = await openStore(`sqlite:${path}`)
    await store.migrate()
    await store.insertPets([{ name: 'a', categoryId: 1, status: 'available' }, { name: 'b', categoryId: 1, status: 'sold' }])
  })
  after(async () => {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers a repeated page from memory while nothing was committed', async () => {
    const first = await store.listPets({ limit: 20 })
    assert.equal(await store.listPets({ limit: 20 }), first, 'the same page, not a new query')
    assert.notEqual(await store.listPets({ limit: 20, status: 'sold' }), first, 'another filter is another page')
    assert.notEqual(await store.listPets({ limit: 1 }), first, 'another limit is another page')
  })

  it('hands out frozen pages: changing one is a TypeError, not another caller\'s page', async () => {
    const page = await store.listPets({ limit: 20 })
    assert.throws(() => { (page as Pet[]).push(page[0]!) }, TypeError)
    assert.throws(() => { (page[0] as Pet).name = 'changed' }, TypeError)
    assert.deepEqual(names(await store.listPets({ limit: 20 })), ['a', 'b'])
  })

  it('sees a create committed by the writer thread', async () => {
    await store.listPets({ limit: 20 })
    await store.createPet({ name: 'c', categoryId: 2, status: 'pending' })
    assert.deepEqual(names(await store.listPets({ limit: 20 })), ['a', 'b', 'c'])
  })

  it('sees a row another process committed on the file', async () => {
    await store.listPets({ limit: 20, status: 'sold' })
    const other = new Database(path)
    try {
      other.prepare("INSERT INTO pets (id, name, category_id, status) VALUES (100, 'd', 3, 'sold')").run()
    } finally {
      other.close()
    }
    assert.deepEqual(names(await store.listPets({ limit: 20, status: 'sold' })), ['b', 'd'])
  })

  it('sees what this connection itself wrote (insert and import)', async () => {
    await store.listPets({ limit: 20, status: 'pending' })
    await store.insertPets([{ name: 'e', categoryId: 4, status: 'pending' }])
    assert.deepEqual(names(await store.listPets({ limit: 20, status: 'pending' })), ['c', 'e'])
    await store.importPets([{ id: 500, name: 'f', categoryId: 5, status: 'pending' }])
    assert.deepEqual(names(await store.listPets({ limit: 20, status: 'pending' })), ['c', 'e', 'f'])
  })
})
