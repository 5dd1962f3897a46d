import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { openStore } from '../../src/store/open-store.js'
import { openConnection } from '../../src/store/sqlite/connection.js'
import { WalIndexHeader } from '../../src/store/sqlite/wal-index-header.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-wal-header-'))
after(() => rmSync(dir, { recursive: true, force: true }))

describe('sqlite: the WAL-index header tells of every commit', () => {
  it('changes with each commit of another connection, and not with reads or a checkpoint', () => {
    const path = join(dir, 'commits.db')
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
      header.changed() // whatever the checkpoint rewrote is seen now, not with the commit below
      writer.prepare('INSERT INTO t VALUES (?)').run(9)
      assert.equal(header.changed(), true, 'a commit at the start of a truncated WAL')
    } finally {
      header.close()
      reader.close()
      writer.close()
    }
  })
})

describe('sqlite: the store watches the header SQLite writes', () => {
  it('follows a symbolic link to the database, as SQLite does, past a stale -shm next to the link', async () => {
    const target = join(dir, 'target.db')
    const link = join(dir, 'link.db')
    const first = openConnection(target)
    first.close()
    symlinkSync(target, link)
    writeFileSync(`${link}-shm`, Buffer.alloc(136, 7)) // left behind, never written by SQLite
    const store = await openStore(`sqlite:${link}`)
    const other = new Database(target)
    try {
      await store.migrate()
      await store.listPets({ limit: 1 })
      const version = store.petsVersion()
      assert.equal(store.petsVersion(), version, 'nothing committed: the same version')
      other.prepare("INSERT INTO pets (name, category_id, status) VALUES ('Rex', 3, 'available')").run()
      assert.notEqual(store.petsVersion(), version, 'a commit by another connection moves the version')
    } finally {
      other.close()
      await store.close()
    }
  })
})

/** The POSIX locks this process holds on `path`, as Linux lists them. */
function locksHeldOn (path: string): number {
  const inode = statSync(path).ino
  return readFileSync('/proc/locks', 'utf8').split('\n')
    .filter((line) => line.includes(' POSIX ') && line.split(/\s+/).includes(String(process.pid)) && line.includes(`:${inode} `)).length
}

describe('sqlite: closing a store keeps the locks of another store on the same file', { skip: existsSync('/proc/locks') ? false : 'needs /proc/locks (Linux)' }, () => {
  // Closing any handle on a file drops every POSIX lock the process holds on it: a handle of
  // the first store's own would take the second store's SQLite locks on the -shm with it.
  it('leaves SQLite its locks on the -shm file while a store of this process still uses it', async () => {
    const path = join(dir, 'two-stores.db')
    const first = await openStore(`sqlite:${path}`)
    await first.migrate()
    await first.listPets({ limit: 1 })
    first.petsVersion()
    const second = await openStore(`sqlite:${path}`)
    try {
      await second.listPets({ limit: 1 })
      second.petsVersion()
      assert.ok(locksHeldOn(`${path}-shm`) > 0, 'SQLite holds a lock on the -shm file')
    } finally {
      await first.close()
    }
    try {
      assert.ok(locksHeldOn(`${path}-shm`) > 0, 'still held after the first store closed')
    } finally {
      await second.close()
    }
  })
})
