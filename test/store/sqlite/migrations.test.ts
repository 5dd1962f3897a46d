import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { openStore } from '../../../src/store/open-store.js'
import { MIGRATIONS } from '../../../src/store/sqlite/migrations.js'
import { createTestDatabase } from '../../support/helper.js'

describe('sqlite: migrations at the same moment', () => {
  it('a store migrating while another process is in the middle of migrating the same file waits for it, then has nothing to apply', async () => {
    const database = await createTestDatabase('sqlite')
    const path = database.url.slice('sqlite:'.length)
    try {
      const peer = spawn(process.execPath, ['test/support/sqlite-migrating-peer.js', path, '500'], { stdio: ['ignore', 'pipe', 'inherit'] })
      const peerDone = new Promise((resolve) => peer.once('exit', resolve))
      await new Promise<void>((resolve) => peer.stdout.once('data', () => resolve())) // it holds the write lock now
      const store = await openStore(database.url)
      try {
        assert.deepEqual(await store.migrate(), [])
      } finally {
        await store.close()
      }
      assert.equal(await peerDone, 0)

      const db = new Database(path, { readonly: true })
      const rows = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>
      db.close()
      assert.deepEqual(rows.map((row) => row.version), MIGRATIONS.map((m) => m.version))
    } finally {
      await database.drop()
    }
  })
})
