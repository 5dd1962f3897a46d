import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { ROOT } from '../support/constants.js'

const SRC = join(ROOT, 'src/')

/** The src/ files `file` loads when it is loaded: its static relative imports, followed (`import(…)` is not followed). */
function loadedWith (file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen
  seen.add(file)
  const text = readFileSync(file, 'utf8')
  for (const [, specifier] of text.matchAll(/^(?:import|export)\s(?!type\b)[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm)) {
    loadedWith(resolve(dirname(file), specifier!.replace(/\.js$/, '.ts')), seen)
  }
  return seen
}

describe('the CLI', () => {
  it('loads the server process module only when serve runs', () => {
    const loaded = [...loadedWith(resolve(SRC, 'cli/main.ts'))].map((file) => file.slice(SRC.length))
    assert.ok(loaded.includes('cli/commands/keys.ts'), `the walk follows the imports: ${loaded.join(', ')}`)
    assert.ok(!loaded.includes('process/server.ts'), 'src/cli/main.ts loads src/process/server.ts')
    // import shares the API's JSON parse and validation messages; the app, its plugins and routes stay out.
    const server = loaded.filter((file) => file === 'app.ts' || file.startsWith('http/plugins/') || file.startsWith('http/routes/'))
    assert.deepEqual(server, [], 'src/cli/main.ts loads the app')
  })
})
