import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { PetstoreClient } from '@petstore/client'
import { parsePetLine } from '../../src/cli/pet-lines.js'
import { TEST_KEY } from '../support/constants.js'
import { backends, createTestDatabase, exportedLines, openTestStore, startTestServer, type TestDatabase } from '../support/helper.js'
import { lockOnceLoading } from '../support/lock-database.js'
import { runCli, runCliInBash, runCliIntoClosedPipe, runCliOnTerminal } from '../support/cli.js'

const STATUSES = ['available', 'pending', 'sold'] as const
const NAMES = ['Rex', 'Zoë 🐕‍🦺', 'Ἀχιλλεύς', 'ليلى', '名前 with "quotes" and \\ back\\slash', 'é (combining)', 'tab\u00a0nbsp', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢']

/** Canonical JSON Lines for `count` animals with gaps in the ids, unicode names and int64 categoryIds. */
function animalLines (count: number): string {
  const lines: string[] = []
  for (let i = 1; i <= count; i++) {
    const categoryId = i % 5 === 0 ? 9223372036854775807n - BigInt(i) : BigInt(i % 50 + 1)
    lines.push(`{"id":${i * 3},"name":${JSON.stringify(`${NAMES[i % NAMES.length]} ${i}`)},"categoryId":${categoryId},"status":"${STATUSES[i % 3]}"}`)
  }
  return `${lines.join('\n')}\n`
}

describe('petstore import and export: help and bad input', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-cli-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })
  const db = (): string => `sqlite:${join(dir, 'petstore.db')}`

  it('shows --help for import and export, with an example', async () => {
    const help = await runCli(['import', '--help'])
    assert.equal(help.code, 0)
    assert.match(help.stdout, /Usage: petstore import \[options\] <file>/)
    assert.match(help.stdout, /--batch-size/)
    assert.match(help.stdout, /Example:/)
    const exportHelp = await runCli(['export', '--help'])
    assert.equal(exportHelp.code, 0)
    assert.match(exportHelp.stdout, /Usage: petstore export/)
    assert.match(exportHelp.stdout, /JSON Lines/)
  })

  it('refuses a missing file and a bad --batch-size in one line, exit code 1', async () => {
    const missing = await runCli(['import', join(dir, 'nope.jsonl'), '--database-url', db()])
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^petstore: .*nope\.jsonl: cannot be read \(ENOENT\)\n$/)
    const file = join(dir, 'one.jsonl')
    writeFileSync(file, animalLines(1))
    const batch = await runCli(['import', file, '--batch-size', '0', '--database-url', db()])
    assert.equal(batch.code, 1)
    assert.equal(batch.stderr, 'petstore: --batch-size: must be an integer from 1 to 100000\n')
  })

  for (const [what, line, message] of [
    ['a line that is not JSON', '{"id":99,"name":"Rex"', /^is not valid JSON/],
    ['an empty name', '{"id":99,"name":"","categoryId":1,"status":"sold"}', /^name: must be a string of 1 to 255 characters/],
    ['a categoryId above int64', '{"id":99,"name":"Rex","categoryId":9223372036854775808,"status":"sold"}', /^categoryId: must be an integer from 1 to 9223372036854775807/],
    ['a misspelt field', '{"id":99,"name":"Rex","categoryID":1,"status":"sold"}', /^categoryID: is not a field/]
  ] as const) {
    it(`names the line number of ${what} and loads nothing of its batch`, async () => {
      const url = `sqlite:${join(dir, `${what.replaceAll(' ', '-')}.db`)}`
      const lines = animalLines(25).split('\n')
      lines[16] = line // line 17
      const file = join(dir, 'bad.jsonl')
      writeFileSync(file, lines.join('\n'))
      const result = await runCli(['import', file, '--batch-size', '10', '--database-url', url])
      assert.equal(result.code, 1)
      assert.equal(result.stderr.split('\n').length, 2, 'one line')
      const detail = /^petstore: line 17: (.*); the 10 animals of lines 1-10 were loaded, nothing after\n$/.exec(result.stderr)
      assert.ok(detail !== null, result.stderr)
      assert.match(detail[1]!, message)
      assert.equal(await exportedLines(url), animalLines(10))
    })
  }

  it('refuses a line longer than 16384 bytes at once, naming it, and keeps the batches before it', async () => {
    const url = `sqlite:${join(dir, 'long-line.db')}`
    const lines = animalLines(25).split('\n')
    lines[16] = `{"id":99,"name":"${'a'.repeat(20 * 1024)}","categoryId":1,"status":"sold"}` // line 17
    const file = join(dir, 'long-line.jsonl')
    writeFileSync(file, lines.join('\n'))
    const result = await runCli(['import', file, '--batch-size', '10', '--database-url', url])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'petstore: line 17: must be at most 16384 bytes; the 10 animals of lines 1-10 were loaded, nothing after\n')
    assert.equal(await exportedLines(url), animalLines(10))
  })

  it('refuses a line of millions of characters without a stack overflow: a 12,000,000-character name, megabytes without a newline', async () => {
    const hugeName = join(dir, 'huge-name.jsonl')
    writeFileSync(hugeName, `${animalLines(1)}{"id":99,"name":"${'a'.repeat(12_000_000)}","categoryId":1,"status":"sold"}\n`)
    const noNewline = join(dir, 'no-newline.jsonl')
    writeFileSync(noNewline, 'a'.repeat(8 * 1024 * 1024))
    for (const [file, line] of [[hugeName, 2], [noNewline, 1]] as const) {
      const result = await runCli(['import', file, '--database-url', `sqlite:${join(dir, 'huge.db')}`])
      assert.equal(result.code, 1)
      assert.equal(result.stderr, `petstore: line ${line}: must be at most 16384 bytes; nothing was loaded\n`)
    }
  })

  it('refuses a line past the limit without waiting for its end (a writer that keeps writing)', async () => {
    const result = await runCli(['import', '-', '--database-url', `sqlite:${join(dir, 'endless.db')}`], { inputLeftOpen: 'a'.repeat(1024 * 1024), timeoutMs: 20_000 })
    assert.equal(result.code, 1)
    assert.equal(result.stderr, 'petstore: line 1: must be at most 16384 bytes; nothing was loaded\n')
  })

  it('loads id 2^63 - 1 as given, and warns in one line that no id is left for new animals', async () => {
    const url = `sqlite:${join(dir, 'last-id.db')}`
    const lines = '{"id":1,"name":"Rex","categoryId":1,"status":"sold"}\n{"id":9223372036854775807,"name":"Max","categoryId":1,"status":"sold"}\n'
    const result = await runCli(['import', '-', '--database-url', url], { input: lines })
    assert.equal(result.code, 0)
    assert.equal(result.stderr, 'petstore: warning: id 9223372036854775807 was imported, the highest there is: no id is left for new animals (POST /v1/pets answers 503, seed fails)\n')
    assert.equal(await exportedLines(url), lines)
  })

  it('loads nothing of a batch the database refuses (an id that exists already)', async () => {
    const url = `sqlite:${join(dir, 'dupe.db')}`
    const file = join(dir, 'dupe.jsonl')
    writeFileSync(file, animalLines(5))
    assert.equal((await runCli(['import', file, '--database-url', url])).code, 0)
    writeFileSync(file, `{"id":1,"name":"new","categoryId":1,"status":"sold"}\n${animalLines(1)}`)
    const again = await runCli(['import', file, '--database-url', url])
    assert.equal(again.code, 1)
    assert.match(again.stderr, /^petstore: lines 1-2: cannot be loaded \(.*UNIQUE.*\); nothing was loaded\n$/)
    assert.equal(await exportedLines(url), animalLines(5))
  })
})

describe('petstore import from a pipe', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-cli-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('reads a named pipe (mkfifo) to its end, as it is written', async () => {
    const url = `sqlite:${join(dir, 'fifo.db')}`
    const fifo = join(dir, 'animals.fifo')
    execFileSync('mkfifo', [fifo])
    const importing = runCli(['import', fifo, '--batch-size', '10', '--database-url', url])
    const writing = writeFile(fifo, animalLines(25)) // its open waits for a reader
    const result = await importing
    // An import that did not read the pipe leaves the writer waiting: a reader of our own ends it.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    await writing
    closeSync(reader)
    assert.deepEqual(result, { code: 0, signal: null, stdout: '', stderr: '' })
    assert.equal(await exportedLines(url), animalLines(25))
  })

  it('exits after a bad line of a named pipe whose writer keeps it open', async () => {
    const fifo = join(dir, 'held-open.fifo')
    execFileSync('mkfifo', [fifo])
    const importing = runCli(['import', fifo, '--database-url', `sqlite:${join(dir, 'held-open.db')}`], { timeoutMs: 10_000 })
    let writer: number | undefined
    // Opened once the import has opened its end (ENXIO before): a writer that never closes.
    for (let waited = 0; writer === undefined && waited < 10_000; waited += 50) {
      try { writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK) } catch { await sleep(50) }
    }
    assert.ok(writer !== undefined, 'the import opened the pipe')
    try {
      writeSync(writer, 'not an animal\n')
      const result = await importing
      assert.equal(result.code, 1, 'exited by itself, before the writer closed')
      assert.match(result.stderr, /^petstore: line 1: is not valid JSON .*; nothing was loaded\n$/)
    } finally {
      closeSync(writer)
    }
  })

  it('reads <(…) and /dev/stdin in a shell pipe as it reads -', async () => {
    const file = join(dir, 'animals.jsonl')
    writeFileSync(file, animalLines(5))
    for (const [name, commandLine] of [
      ['substituted', `petstore import <(cat '${file}') --database-url 'sqlite:${join(dir, 'substituted.db')}'`],
      ['stdin', `cat '${file}' | petstore import /dev/stdin --database-url 'sqlite:${join(dir, 'stdin.db')}'`]
    ]) {
      assert.deepEqual(await runCliInBash(commandLine!), { code: 0, signal: null, stdout: '', stderr: '' }, name)
      assert.equal(await exportedLines(`sqlite:${join(dir, `${name}.db`)}`), animalLines(5), name)
    }
  })

  it('reads a character device (/dev/null: no animal)', async () => {
    const result = await runCli(['import', '/dev/null', '--database-url', `sqlite:${join(dir, 'null.db')}`])
    assert.deepEqual(result, { code: 0, signal: null, stdout: '', stderr: '' })
  })

  it('refuses a directory in one line, exit code 1', async () => {
    const result = await runCli(['import', dir, '--database-url', `sqlite:${join(dir, 'directory.db')}`])
    assert.deepEqual(result, { code: 1, signal: null, stdout: '', stderr: `petstore: ${dir}: is a directory, not a file\n` })
  })
})

describe('petstore import when the database is locked', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-cli-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  it('stops with one line naming the lock, the batch and the lines loaded before it, exit code 1', async () => {
    const file = join(dir, 'many.jsonl')
    writeFileSync(file, animalLines(100_000))
    const database = join(dir, 'locked.db')
    const importing = runCli(['import', file, '--batch-size', '1000', '--database-url', `sqlite:${database}`])
    const lock = await lockOnceLoading(database)
    try {
      const result = await importing
      assert.equal(result.code, 1)
      const loaded = /^petstore: lines ([0-9]+)-[0-9]+: cannot be loaded \(the database is unavailable: database is locked\); the ([0-9]+) animals of lines 1-[0-9]+ were loaded, nothing after\n$/.exec(result.stderr)
      assert.ok(loaded !== null, result.stderr)
      assert.equal(Number(loaded[2]), Number(loaded[1]) - 1)
      assert.equal((lock.prepare('SELECT count(*) AS n FROM pets').get() as { n: number }).n, Number(loaded[2]))
    } finally {
      lock.exec('ROLLBACK')
      lock.close()
    }
  })
})

describe('petstore export when the output cannot be written', () => {
  let database: TestDatabase
  before(async () => {
    database = await createTestDatabase('sqlite')
    const store = await openTestStore(database)
    await store.importPets(animalLines(10).trim().split('\n').map(parsePetLine))
    await store.close()
  })
  after(async () => { await database.drop() })

  it('ends quietly with exit code 0 when the reader stops early (export | head)', async () => {
    const result = await runCliIntoClosedPipe(['export', '--database-url', database.url])
    assert.deepEqual({ code: result.code, stderr: result.stderr }, { code: 0, stderr: '' })
  })

  it('says so in one line naming the cause, exit code 1, no stack trace (stdout on /dev/full: ENOSPC)', async () => {
    const full = openSync('/dev/full', 'w')
    try {
      const result = await runCli(['export', '--database-url', database.url], { stdout: full })
      assert.equal(result.code, 1)
      assert.equal(result.stderr, 'petstore: cannot write the output (ENOSPC: no space left on device, write)\n')
    } finally {
      closeSync(full)
    }
  })
})

for (const backend of backends()) {
  describe(`${backend.name}: petstore export | petstore import`, { skip: backend.skip }, () => {
    let source: TestDatabase
    let target: TestDatabase
    before(async () => {
      source = await createTestDatabase(backend.name)
      target = await createTestDatabase(backend.name)
    })
    after(async () => {
      await source.drop()
      await target.drop()
    })

    it('round-trips every animal exactly into an empty database: ids, unicode names, int64 categoryIds', async () => {
      const lines = animalLines(2500)
      const loaded = await runCli(['import', '-', '--batch-size', '1000', '--database-url', source.url], { input: lines })
      assert.equal(loaded.code, 0, loaded.stderr)
      assert.equal(loaded.stderr, '', 'nothing extra in a pipe')
      assert.equal(loaded.stdout, '')

      const exported = await runCli(['export', '--database-url', source.url])
      assert.equal(exported.code, 0, exported.stderr)
      assert.equal(exported.stdout, lines)

      const reloaded = await runCli(['import', '-', '--database-url', target.url], { input: exported.stdout })
      assert.equal(reloaded.code, 0, reloaded.stderr)
      assert.equal(await exportedLines(target.url), lines)

      // The API serves the imported animals exactly, and new ids follow the imported ones.
      const server = await startTestServer({ backend: backend.name, database: target })
      try {
        const client = new PetstoreClient({ baseUrl: server.api, apiKey: TEST_KEY })
        const pet = await client.getPet(15)
        assert.deepEqual(pet, { id: 15, name: `${NAMES[5 % NAMES.length]} 5`, categoryId: 9223372036854775802n, status: 'sold' })
        const created = await client.createPet({ name: 'after import', categoryId: 1 })
        assert.equal(created.id, 7501)
      } finally {
        await server.close()
      }
    })
  })
}

describe('petstore import on a terminal', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-cli-')) })
  after(() => { rmSync(dir, { recursive: true, force: true }) })

  // Speed is measured by the benchmark (npm run bench), never asserted here.
  it('shows a progress bar on a terminal and reports the rate', async () => {
    const count = 50_000
    const file = join(dir, 'many.jsonl')
    writeFileSync(file, animalLines(count))
    const result = await runCliOnTerminal(['import', file, '--database-url', `sqlite:${join(dir, 'many.db')}`])
    assert.equal(result.code, 0, result.stdout)
    assert.match(result.stdout, /importing \[[█░]+\] 100% \| 50000 animals/)
    assert.match(result.stdout, /imported 50000 animals in [0-9.]+ s \([0-9]+ a second\)/)
  })
})
