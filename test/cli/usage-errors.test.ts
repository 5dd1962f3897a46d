import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runCli } from '../support/cli.js'

// Each is refused while the command line is parsed, before any database is opened.
describe('petstore: a command line it cannot parse', () => {
  for (const [what, args, line] of [
    ['keys create without --name', ['keys', 'create'], "required option '--name <name>' not specified"],
    ['seed without --count', ['seed'], "required option '--count <n>' not specified"],
    ['--count without its value', ['seed', '--count'], "option '--count <n>' argument missing"],
    ['import without its file', ['import'], "missing required argument 'file'"],
    ['an extra argument', ['import', 'a.jsonl', 'b.jsonl'], "too many arguments for 'import'. Expected 1 argument but got 2."],
    ['an unknown option', ['export', '--bogus'], "unknown option '--bogus'"],
    ['a misspelt option, the suggestion folded in', ['export', '--database-ur', 'sqlite:x.db'], "unknown option '--database-ur' (Did you mean --database-url?)"],
    ['an unknown command', ['exprot'], "unknown command 'exprot' (Did you mean export?)"]
  ] as const) {
    it(`refuses ${what}: one petstore: line, exit code 1`, async () => {
      const result = await runCli([...args])
      assert.deepEqual(result, { code: 1, signal: null, stdout: '', stderr: `petstore: ${line}\n` })
    })
  }

  it('still prints --help and --version to stdout, exit code 0', async () => {
    const version = await runCli(['--version'])
    assert.deepEqual(version, { code: 0, signal: null, stdout: '1.0.0\n', stderr: '' })
    const help = await runCli(['keys', 'create', '--help'])
    assert.equal(help.code, 0)
    assert.equal(help.stderr, '')
    assert.match(help.stdout, /^Usage: petstore keys create \[options\]/)
  })
})
