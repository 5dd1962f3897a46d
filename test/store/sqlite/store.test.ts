import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { createTestDatabase, openTestStore, type TestDatabase } from '../../support/helper.js'
import { configureConnection } from '../../../src/store/sqlite/connection.js'
import type { Store } from '../../../src/store/store.js'

describe('SQLite store', () => {
  let database: TestDatabase
  let store: Store
  let path: string
  before(async () => {
    database = await createTestDatabase('sqlite')
    path = database.url.slice('sqlite:'.length)
    store = await openTestStore(database)
  })
  after(async () => {
    await store.close()
    await database.drop()
  })

  it('runs in WAL mode with synchronous=FULL, so a commit is on disk before the 201', async () => {
    const pet = await store.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
    assert.equal(pet?.kind, 'created')
    // A second connection sees the committed row: it is in the database file's WAL, not in a cache.
    const reader = new Database(path, { readonly: true })
    try {
      assert.equal(reader.pragma('journal_mode', { simple: true }), 'wal')
      assert.equal((reader.prepare('SELECT count(*) AS n FROM pets').get() as { n: number }).n, 1)
    } finally {
      reader.close()
    }
  })

  it('configures each connection with WAL, synchronous=FULL and exact integers', () => {
    const db = new Database(path)
    try {
      configureConnection(db)
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
      assert.equal(db.pragma('synchronous', { simple: true }), 2n, 'FULL')
      assert.equal(typeof (db.prepare('SELECT 9007199254740993 AS n').get() as { n: unknown }).n, 'bigint')
    } finally {
      db.close()
    }
  })

  it('serves the list by status, at any depth, from the (status, id) index', () => {
    const db = new Database(path, { readonly: true })
    try {
      const plan = (sql: string): string => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((row) => row.detail).join('; ')
      const byStatus = plan("SELECT id, name, category_id, status FROM pets WHERE status = 'sold' AND id > 5000000 ORDER BY id LIMIT 21")
      assert.match(byStatus, /USING (COVERING )?INDEX pets_status_id \(status=\? AND (rowid|id)>\?\)/)
      assert.doesNotMatch(byStatus, /TEMP B-TREE/)
      const all = plan('SELECT id, name, category_id, status FROM pets WHERE id > 5000000 ORDER BY id LIMIT 21')
      assert.match(all, /USING INTEGER PRIMARY KEY \(rowid>\?\)/)
    } finally {
      db.close()
    }
  })
})
