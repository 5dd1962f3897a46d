import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { before, describe, it } from 'node:test'
import { ROOT } from '../support/constants.js'

// ESLint in a process of its own, as `npm run lint` runs it: its config loads packages that tsx's loader cannot.
const LINT_EACH = `
import { ESLint } from 'eslint'
const eslint = new ESLint()
const cases = JSON.parse(process.env.CASES)
const found = []
for (const [filePath, source] of cases) {
  const [result] = await eslint.lintText(source + '\\n', { filePath })
  found.push(result.messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message))
}
process.stdout.write(JSON.stringify(found))
`

/** The boundary errors ESLint reports for each line, as if written in its file. */
function boundaryErrors (cases: Array<[string, string]>): string[][] {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', LINT_EACH], {
    cwd: ROOT,
    env: { ...process.env, CASES: JSON.stringify(cases) }
  })
  return JSON.parse(String(output)) as string[][]
}

// Each import that runs up or across a layer, and the file it is written in.
const REFUSED: Array<[string, string]> = [
  ['src/store/sqlite/store.ts', "import { PetNotFound } from '../../domain/errors.js'"],
  ['src/store/store.ts', "import { HttpError } from '../http/errors.js'"],
  ['src/store/postgres/store.ts', "import type { Config } from '../../config.js'"],
  ['src/domain/pets.ts', "import { HttpError } from '../http/errors.js'"],
  ['src/domain/api-keys/verifier.ts', "import type { App } from '../../app.js'"],
  ['src/schemas/pets.ts', "import type { Store } from '../store/store.js'"],
  ['src/schemas/error.ts', "import { PetNotFound } from '../domain/errors.js'"],
  ['src/cli/commands/import.ts', "import { jsonBody } from '../../http/json-body.js'"],
  ['src/http/routes/pets.ts', "import { startServer } from '../../process/server.js'"],
  ['src/http/stages/admission.ts', "import { loopThreadTimes } from '../../process/loop-thread.js'"]
]

const ALLOWED: Array<[string, string]> = [
  ['src/http/routes/pets.ts', "import { PetCatalogue } from '../../domain/pets.js'"],
  ['src/process/loop-thread.ts', "import type { ThreadTimes } from '../http/stages/admission.js'"],
  ['src/domain/pets.ts', "import type { Store } from '../store/store.js'"],
  ['src/store/sqlite/rows.ts', "import { parseInt64 } from '../../schemas/int64.js'"],
  ['src/cli/commands/keys.ts', "import { issueApiKey } from '../../domain/api-keys/lifecycle.js'"]
]

describe('npm run lint: imports only run down (http -> domain -> store -> schemas)', () => {
  let found: string[][]
  before(() => { found = boundaryErrors([...REFUSED, ...ALLOWED]) })

  REFUSED.forEach(([file, line], i) => {
    it(`refuses in ${file}: ${line}`, () => { assert.equal(found[i]!.length, 1) })
  })
  ALLOWED.forEach(([file, line], i) => {
    it(`allows in ${file}: ${line}`, () => { assert.deepEqual(found[REFUSED.length + i], []) })
  })
})

// The client's tests and the one module of theirs that may reach test/support/.
const CLIENT_TESTS: Array<[string, string, boolean]> = [
  ['packages/client/test/petstore-client.test.ts', "import { backends } from '../../../test/support/helper.js'", false],
  ['packages/client/test/packed.ts', "import { ROOT } from '../../../test/support/constants.js'", false],
  ['packages/client/test/petstore-client.test.ts', "import { backends } from './server-support.js'", true],
  ['packages/client/test/server-support.ts', "import { backends } from '../../../test/support/helper.js'", true]
]

describe('npm run lint: the client\'s tests reach the server\'s test support through server-support.ts only', () => {
  let found: string[][]
  before(() => { found = boundaryErrors(CLIENT_TESTS.map(([file, line]) => [file, line])) })

  CLIENT_TESTS.forEach(([file, line, allowed], i) => {
    it(`${allowed ? 'allows' : 'refuses'} in ${file}: ${line}`, () => { assert.equal(found[i]!.length, allowed ? 0 : 1) })
  })
})
