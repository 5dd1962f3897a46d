import assert from 'node:assert/strict'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { post, startTestServer, type TestServer } from '../support/helper.js'
import { fillDisk, mountSmallDisk } from '../support/small-disk.js'
import { runCli, runCliOnTerminal } from '../support/cli.js'

/** The copy's animal ids, integrity and schema version, read with SQLite itself. */
function readCopy (file: string): { ids: Set<number>, integrity: string, version: number } {
  const db = new Database(file, { readonly: true })
  try {
    return {
      ids: new Set(db.prepare('SELECT id FROM pets').pluck().all() as number[]),
      integrity: db.pragma('integrity_check', { simple: true }) as string,
      version: db.prepare('SELECT max(version) FROM schema_migrations').pluck().get() as number
    }
  } finally {
    db.close()
  }
}

describe('petstore backup (SQLite)', () => {
  let server: TestServer
  let dir: string
  let databaseUrl: string
  before(async () => {
    server = await startTestServer()
    databaseUrl = server.database.url
    dir = join(databaseUrl.slice('sqlite:'.length), '..')
  })
  after(async () => { await server?.close() })

  it('copies while the service creates: every animal answered 201 before it began is in the copy', async () => {
    const answered: number[] = []
    const load = { creating: true }
    // Four writers keep creating through the backup and after it.
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let i = 0; load.creating; i++) {
        const response = await post(server, '/pets', { name: `w${writer} ${i}`, categoryId: 1 })
        if (response.status === 201) answered.push((await response.json() as { id: number }).id)
      }
    })
    while (answered.length < 200) await new Promise((resolve) => setTimeout(resolve, 20))
    const before = [...answered]
    const file = join(dir, 'under-load.db')
    const result = await runCli(['backup', '--to', file, '--database-url', databaseUrl])
    load.creating = false
    await Promise.all(writers)
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /^backed up \d+ animals to .*under-load\.db \([0-9.]+ MiB\) in [0-9.]+ s\n$/)
    const copy = readCopy(file)
    assert.equal(copy.integrity, 'ok')
    assert.equal(copy.version, 3)
    for (const id of before) assert.ok(copy.ids.has(id), `animal ${id} answered 201 before the backup and is in the copy`)
    assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith('.tmp')), [], 'no temporary file is left')
  })

  it('records each backup, which the store reports as the last', async () => {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true })
    const rows = db.prepare('SELECT taken_at, file, bytes, animals FROM backups').all() as Array<{ taken_at: string, file: string, bytes: number, animals: number }>
    db.close()
    assert.equal(rows.length, 1)
    assert.equal(rows[0]!.file, join(dir, 'under-load.db'))
    assert.ok(rows[0]!.bytes > 0 && rows[0]!.animals >= 200)
    assert.equal((await server.store.lastBackupAt())?.toISOString(), rows[0]!.taken_at)
  })

  it('refuses an existing file without --force, and replaces it with --force', async () => {
    const file = join(dir, 'existing.db')
    writeFileSync(file, 'not a backup')
    const refused = await runCli(['backup', '--to', file, '--database-url', databaseUrl])
    assert.equal(refused.code, 1)
    assert.equal(refused.stderr, `petstore: ${file} exists; --force replaces it\n`)
    const forced = await runCli(['backup', '--to', file, '--force', '--database-url', databaseUrl])
    assert.equal(forced.code, 0, forced.stderr)
    assert.equal(readCopy(file).integrity, 'ok')
  })

  it('shows a bar on a terminal and ends with the summary line', async () => {
    const file = join(dir, 'terminal.db')
    const result = await runCliOnTerminal(['backup', '--to', file, '--database-url', databaseUrl])
    assert.equal(result.code, 0, result.stdout)
    assert.match(result.stdout, /backing up \[.*\] 100% \| \d+ MiB/)
    assert.match(result.stdout, /backed up \d+ animals to .*terminal\.db/)
  })

  it('points a PostgreSQL database to pg_dump -Fc, in one line', async () => {
    const result = await runCli(['backup', '--to', join(dir, 'pg.db'), '--database-url', 'postgres://nobody@127.0.0.1:1/none'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'petstore: --database-url is PostgreSQL: back it up with pg_dump -Fc (docs/operations.md)\n')
    assert.equal(existsSync(join(dir, 'pg.db')), false)
  })

  for (const { name, readOnly, reason } of [
    { name: 'a full disk', readOnly: false, reason: 'the disk is full' },
    { name: 'a read-only folder', readOnly: true, reason: 'the file system is read-only' }
  ]) {
    it(`refuses ${name} in one line, leaving neither the file nor a temporary one`, async (t) => {
      const disk = mountSmallDisk('1m', { readOnly })
      if ('refused' in disk) return t.skip(`cannot mount a tmpfs (${disk.refused})`)
      try {
        if (!readOnly) fillDisk(join(disk.dir, 'filler'))
        const file = join(disk.dir, 'backup.db')
        const result = await runCli(['backup', '--to', file, '--database-url', databaseUrl])
        assert.equal(result.code, 1)
        assert.equal(result.stderr, `petstore: cannot back up to ${file}: ${reason}\n`)
        assert.deepEqual(readdirSync(disk.dir), readOnly ? [] : ['filler'])
      } finally {
        disk.unmount()
      }
    })
  }
})
