import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { openConnection } from '../../src/store/sqlite/connection.js'
import { WalIndexHeader } from '../../src/store/sqlite/wal-index-header.js'

describe('sqlite: the WAL-index header tells of every commit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-wal-header-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('changes with each commit of another connection, and not with reads or a checkpoint', () => {
    const path = join(dir, 'pets.db')
    const header = new WalIndexHeader(path)
    const writer = openConnection(path)
    const reader = new Database(path, { readonly: true })
    try {
      assert.equal(header.changed(), true, 'no -shm file yet: nothing can be cached')
      writer.exec('CREATE TABLE t (x INTEGER)')
      assert.equal(header.changed(), true, 'the first look')
      assert.equal(header.changed(), false, 'nothing committed since')

      reader.prepare('SELECT count(*) FROM t').get()
      writer.pragma('wal_checkpoint(PASSIVE)')
      assert.equal(header.changed(), false, 'a read and a checkpoint change no data')

      for (let i = 0; i < 3; i++) {
        writer.prepare('INSERT INTO t VALUES (?)').run(i)
        assert.equal(header.changed(), true, `commit ${i + 1}`)
        assert.equal(header.changed(), false, `nothing after commit ${i + 1}`)
      }

      // After a checkpoint that empties the WAL, the next commit starts it over from its first frame.
      writer.pragma('wal_checkpoint(TRUNCATE)')
      header.changed()
      writer.prepare('INSERT INTO t VALUES (?)').run(9)
      assert.equal(header.changed(), true, 'a commit at the start of a truncated WAL')
    } finally {
      header.close()
      reader.close()
      writer.close()
    }
  })
})
