import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { openStore } from '../../../src/store/open-store.js'

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
      await store.findPet(1)
      assert.equal(threads(), before, 'no thread after open, migrate and reads')
      await store.createPet({ name: 'Rex', categoryId: 3, status: 'available' })
      assert.ok(threads() > before, 'the writer thread runs once a create came')
    } finally {
      await store.close()
    }
  })

  // SQLite's own busy handler sleeps 50 then 100 ms between tries by then: it took the lock 89.8 ms late.
  it('takes the write lock within milliseconds once another connection that held it for 240 ms commits', async () => {
    const path = join(dir, 'contended.db')
    const store = await openStore(`sqlite:${path}`)
    const other = new Database(path)
    try {
      await store.migrate()
      await store.createPet({ name: 'first', categoryId: 1, status: 'available' })
      other.exec('BEGIN IMMEDIATE')
      const created = store.createPet({ name: 'waited', categoryId: 1, status: 'available' })
      await sleep(240)
      other.exec('COMMIT')
      const released = performance.now()
      const outcome = await created
      const late = performance.now() - released
      assert.equal(outcome?.kind, 'created')
      assert.ok(late < 40, `created ${late.toFixed(1)} ms after the lock was free`)
    } finally {
      other.close()
      await store.close()
    }
  })
})
