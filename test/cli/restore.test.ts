import assert from 'node:assert/strict'
import { copyFileSync, existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { AUTH, JSON_AUTH, createTestDatabase, startTestServer, type TestDatabase } from '../support/helper.js'
import { runCli } from '../support/cli.js'
import { listAll, type ListedPet as Pet } from '../support/list-pages.js'
import { startServerProcess } from '../support/process.js'

/** The animals in a database file, read with SQLite itself. */
function petsIn (file: string): Map<number, Pet> {
  const db = new Database(file, { readonly: true })
  try {
    const rows = db.prepare('SELECT id, name, category_id AS categoryId, status FROM pets').all() as Pet[]
    return new Map(rows.map((row) => [row.id, row]))
  } finally {
    db.close()
  }
}

describe('sqlite: restore a backup taken under load, as docs/operations.md says', () => {
  let database: TestDatabase
  let file: string
  before(async () => {
    database = await createTestDatabase('sqlite')
    file = database.url.slice('sqlite:'.length)
  })
  after(async () => { await database.drop() })

  it('answers every animal the backup held after a SIGKILL and the documented steps, intact', async () => {
    const server = await startServerProcess(database.url)
    const answered: number[] = []
    const load = { on: true }
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let i = 0; load.on; i++) {
        try {
          const response = await fetch(`${server.origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: `w${writer} ${i}`, categoryId: writer }) })
          if (response.status === 201) answered.push((await response.json() as Pet).id)
        } catch {
          return // killed
        }
      }
    })
    while (answered.length < 300) await sleep(20)
    const beforeBackup = [...answered]
    const backup = join(file, '..', 'backup.db')
    const result = await runCli(['backup', '--to', backup, '--database-url', database.url])
    assert.equal(result.code, 0, result.stderr)
    await sleep(300)
    server.child.kill('SIGKILL')
    load.on = false
    await Promise.all(writers)
    await server.exited
    const held = petsIn(backup)
    for (const id of beforeBackup) assert.ok(held.has(id), `animal ${id}, answered 201 before the backup, is in it`)

    // The steps: the service is stopped; remove the old -wal and -shm; replace the file; start.
    assert.ok(existsSync(`${file}-wal`), 'the killed service left its WAL')
    rmSync(`${file}-wal`, { force: true })
    rmSync(`${file}-shm`, { force: true })
    copyFileSync(backup, file)
    // The restored service runs in this process: only the SIGKILL needed one.
    const restored = await startTestServer({ database })
    try {
      const listed = new Map((await listAll(`${restored.api}/pets?limit=100`)).map((pet) => [pet.id, pet]))
      assert.deepEqual(listed, held, 'the restored service lists exactly the animals of the backup')
      const some = [...held.keys()].filter((_, i) => i % 50 === 0)
      for (const id of some) assert.equal((await fetch(`${restored.origin}/v1/pets/${id}`, { headers: AUTH })).status, 200)
      const created = await fetch(`${restored.origin}/v1/pets`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: 'after restore', categoryId: 1 }) })
      assert.equal(created.status, 201)
      assert.ok(!held.has((await created.json() as Pet).id), 'a new animal gets an id of its own')
    } finally {
      await restored.close()
    }
    const db = new Database(file, { readonly: true })
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok')
    db.close()
  })
})
