import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { backends, createTestDatabase, exportedLines, type TestDatabase } from '../support/helper.js'
import { runCli } from '../support/cli.js'

const CHUNK_BYTES = 1 << 20

function petLine (id: number, name: string): string {
  return `{"id":${id},"name":${JSON.stringify(name)},"categoryId":1,"status":"sold"}`
}

for (const backend of backends()) {
  describe(`${backend.name}: petstore import decodes UTF-8 strictly`, { skip: backend.skip }, () => {
    let dir: string
    let database: TestDatabase
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'petstore-utf8-'))
      database = await createTestDatabase(backend.name)
    })
    after(async () => {
      await database.drop()
      rmSync(dir, { recursive: true, force: true })
    })

    it('refuses invalid UTF-8, naming its line, and loads nothing of its batch', async () => {
      const file = join(dir, 'bad.jsonl')
      const bad = Buffer.from(petLine(2, 'Re?x'))
      bad[bad.indexOf('?')] = 0xff
      writeFileSync(file, Buffer.concat([Buffer.from(`${petLine(1, 'Rex')}\n`), bad, Buffer.from(`\n${petLine(3, 'Max')}\n`)]))
      const result = await runCli(['import', file, '--database-url', database.url])
      assert.equal(result.code, 1)
      assert.equal(result.stderr, 'petstore: line 2: is not valid UTF-8; nothing was loaded\n')
      assert.equal(await exportedLines(database.url), '')
    })

    it('keeps a character whose bytes straddle two chunks of the file', async () => {
      const file = join(dir, 'straddle.jsonl')
      const lines: string[] = []
      let size = 0
      while (CHUNK_BYTES - size > 100) {
        lines.push(petLine(lines.length + 1, 'Zoë'))
        size += Buffer.byteLength(lines.at(-1)!) + 1
      }
      // The dog (4 bytes) of the next line starts 2 bytes before the end of the first chunk.
      const start = `{"id":${lines.length + 1},"name":"`
      lines.push(petLine(lines.length + 1, `${'x'.repeat(CHUNK_BYTES - 2 - size - start.length)}🐕`))
      const text = `${lines.join('\n')}\n`
      assert.equal(Buffer.from(text).indexOf(Buffer.from('🐕')), CHUNK_BYTES - 2)
      writeFileSync(file, text)
      const result = await runCli(['import', file, '--database-url', database.url])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(await exportedLines(database.url), text)
    })
  })
}
