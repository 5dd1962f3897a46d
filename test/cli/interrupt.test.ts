import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { backends, createTestDatabase, exportedLines, openTestStore, type TestDatabase } from '../support/helper.js'
import { spawnCli, startCliOnTerminal, type TerminalCli } from '../support/cli.js'

const HIDE_CURSOR = '\x1b[?25l'
const SHOW_CURSOR = '\x1b[?25h'
const WRAP_OFF = '\x1b[?7l'
const WRAP_ON = '\x1b[?7h'

/** The ids `petstore export` writes, read in this process: the subject here is the stopped command. */
async function exportedIds (url: string): Promise<number[]> {
  return [...(await exportedLines(url)).matchAll(/^\{"id":(\d+),/gm)].map((match) => Number(match[1]))
}

/** Waits until the database holds an animal: a batch was committed. */
async function waitForCommitted (database: TestDatabase): Promise<void> {
  const store = await openTestStore(database)
  try {
    while ((await store.listPets({ limit: 1 })).length === 0) await sleep(20)
  } finally {
    await store.close()
  }
}

/** Waits until the bar shows animals committed, so the work is midway. */
async function waitForAnimals (cli: TerminalCli): Promise<void> {
  await cli.waitFor(/\| [1-9][0-9]* animals/)
}

/**
 * The end of what the terminal showed: the cursor shown again and line wrap back on after the
 * bar hid and turned them off, then the one line, and nothing after it.
 */
function assertTerminalRestored (output: string, line: RegExp): RegExpExecArray {
  assert.ok(output.includes(HIDE_CURSOR) && output.includes(WRAP_OFF), 'the bar was shown')
  assert.ok(output.lastIndexOf(SHOW_CURSOR) > output.lastIndexOf(HIDE_CURSOR), `the cursor is shown again: ${JSON.stringify(output.slice(-300))}`)
  assert.ok(output.lastIndexOf(WRAP_ON) > output.lastIndexOf(WRAP_OFF), `line wrap is back on: ${JSON.stringify(output.slice(-300))}`)
  const lines = output.split(/\r?\n/).filter((text) => text.startsWith('petstore:'))
  assert.equal(lines.length, 1, JSON.stringify(lines))
  const match = line.exec(lines[0]!)
  assert.ok(match !== null, JSON.stringify(lines[0]))
  assert.ok(output.lastIndexOf(WRAP_ON) < output.lastIndexOf('petstore:'), 'the line comes after the terminal is restored')
  assert.match(output, /petstore: [^\n]*\r?\n$/, 'nothing follows the line')
  return match
}

const MANY = 1_000_000
let many: string | undefined
/** MANY animals as JSON Lines, made once for every backend. */
function manyLines (): string {
  many ??= Array.from({ length: MANY }, (_, i) => `{"id":${i + 1},"name":"Rex ${i}","categoryId":3,"status":"sold"}\n`).join('')
  return many
}

for (const backend of backends()) {
  describe(`${backend.name}: petstore seed and import stopped by a signal`, { skip: backend.skip }, () => {
    let database: TestDatabase
    let dir: string
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'petstore-cli-'))
    })
    after(() => { rmSync(dir, { recursive: true, force: true }) })
    const fresh = async (): Promise<TestDatabase> => {
      await database?.drop()
      database = await createTestDatabase(backend.name)
      return database
    }
    after(async () => { await database?.drop() })

    it('Ctrl-C on a terminal stops a seed after its batch in flight: terminal restored, one line, exit code 130', async () => {
      const { url } = await fresh()
      const cli = startCliOnTerminal(['seed', '--count', '10000000', '--batch-size', '2000', '--database-url', url])
      await waitForAnimals(cli)
      cli.type('\x03')
      assert.equal(await cli.exited, 130, cli.output.slice(-500))
      const [, added] = assertTerminalRestored(cli.output, /^petstore: stopped by SIGINT; the ([0-9]+) animals added before it stay in the database$/)
      const ids = await exportedIds(url)
      assert.equal(ids.length, Number(added), 'the database holds what the line says')
      assert.ok(ids.length > 0 && ids.length < 10_000_000 && ids.length % 2000 === 0, String(ids.length))
      assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i + 1))
    })

    it('SIGTERM does the same with exit code 143', async () => {
      const { url } = await fresh()
      const cli = startCliOnTerminal(['seed', '--count', '10000000', '--batch-size', '2000', '--database-url', url])
      await waitForAnimals(cli)
      process.kill(await cli.pid, 'SIGTERM')
      assert.equal(await cli.exited, 143, cli.output.slice(-500))
      const [, added] = assertTerminalRestored(cli.output, /^petstore: stopped by SIGTERM; the ([0-9]+) animals added before it stay in the database$/)
      assert.equal((await exportedIds(url)).length, Number(added))
    })

    it('Ctrl-C on a terminal stops an import after its batch in flight, and says which lines were loaded', async () => {
      const { url } = await fresh()
      const file = join(dir, 'many.jsonl')
      writeFileSync(file, manyLines())
      const cli = startCliOnTerminal(['import', file, '--batch-size', '2000', '--database-url', url])
      await waitForAnimals(cli)
      cli.type('\x03')
      assert.equal(await cli.exited, 130, cli.output.slice(-500))
      const [, loaded, last] = assertTerminalRestored(cli.output, /^petstore: stopped by SIGINT; the ([0-9]+) animals of lines 1-([0-9]+) were loaded, nothing after$/)
      assert.equal(loaded, last)
      const ids = await exportedIds(url)
      assert.equal(ids.length, Number(loaded), 'the database holds what the line says')
      assert.ok(ids.length < MANY && ids.length % 2000 === 0, String(ids.length))
      assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i + 1))
    })

    it('in a pipe, SIGINT stops a seed the same way: the one line on stderr, exit code 130', async () => {
      const database = await fresh()
      const child = spawnCli(['seed', '--count', '10000000', '--batch-size', '2000', '--database-url', database.url])
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      await waitForCommitted(database)
      child.kill('SIGINT')
      assert.equal(await exited, 130, child.output.stderr)
      assert.equal(child.output.stdout, '')
      const [, added] = /^petstore: stopped by SIGINT; the ([0-9]+) animals added before it stay in the database\n$/.exec(child.output.stderr) ?? assert.fail(child.output.stderr)
      assert.equal((await exportedIds(database.url)).length, Number(added))
    })

    it('a second signal ends it at once, without waiting: here an import waiting for more input', async () => {
      const database = await fresh()
      const child = spawnCli(['import', '-', '--batch-size', '2', '--database-url', database.url], { stdin: 'pipe' })
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      child.stdin!.write([1, 2, 3].map((id) => `{"id":${id},"name":"Rex","categoryId":3,"status":"sold"}\n`).join(''))
      await waitForCommitted(database)
      child.kill('SIGINT') // asks it to stop before its next batch, which waits for a line that never comes
      await sleep(300)
      child.kill('SIGINT')
      assert.equal(await exited, 130, child.output.stderr)
      assert.equal(child.output.stderr, 'petstore: stopped by SIGINT twice, without waiting for the batch in flight; the 2 animals committed before it stay in the database\n')
      assert.deepEqual(await exportedIds(database.url), [1, 2])
    })
  })
}
