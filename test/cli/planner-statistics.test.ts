import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { backends, createTestDatabase, type TestDatabase } from '../support/helper.js'
import { runCli } from '../support/cli.js'
import { query } from '../support/database.js'

/** What the planner knows of the animals: SQLite's sqlite_stat1 rows for pets, PostgreSQL's row estimate (-1: never analyzed). */
async function plannerKnows (database: TestDatabase): Promise<string> {
  const url = database.directUrl
  if (url.startsWith('sqlite:')) {
    const stats = (await query(url, "SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")).length === 0
      ? []
      : await query(url, "SELECT stat FROM sqlite_stat1 WHERE tbl = 'pets'")
    return stats.map((row) => String(row.stat).split(' ')[0]).join(',')
  }
  return String((await query(url, "SELECT reltuples FROM pg_class WHERE oid = 'pets'::regclass"))[0]!.reltuples)
}

for (const backend of backends()) {
  describe(`${backend.name}: the planner's statistics after a bulk load`, { skip: backend.skip }, () => {
    let dir: string
    before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-stats-')) })
    after(() => { rmSync(dir, { recursive: true, force: true }) })

    it('are refreshed by petstore seed', async () => {
      const database = await createTestDatabase(backend.name)
      try {
        const seeded = await runCli(['seed', '--count', '300', '--database-url', database.url])
        assert.equal(seeded.code, 0, seeded.stderr)
        assert.equal(await plannerKnows(database), '300')
      } finally {
        await database.drop()
      }
    })

    it('are refreshed by petstore import', async () => {
      const database = await createTestDatabase(backend.name)
      const file = join(dir, 'pets.jsonl')
      writeFileSync(file, Array.from({ length: 250 }, (_, i) => `{"id":${i + 1},"name":"Rex ${i}","categoryId":3,"status":"sold"}\n`).join(''))
      try {
        const imported = await runCli(['import', file, '--database-url', database.url])
        assert.equal(imported.code, 0, imported.stderr)
        assert.equal(await plannerKnows(database), '250')
      } finally {
        await database.drop()
      }
    })
  })
}
