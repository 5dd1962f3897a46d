/**
 * What `npm run test:quick` runs (scripts/quick-tests.ts): the test files that start no program,
 * every other one left out with the module through which it starts one.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { before, describe, it } from 'node:test'
import { leftOutLine, splitQuickTests, type QuickSplit } from '../scripts/quick-tests.js'
import { ROOT } from './support/constants.js'

const TEST_FILES = ['test', 'packages/client/test'].flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && !file.includes('node_modules'))
  .map((file) => `${dir}/${file}`))

describe('npm run test:quick', () => {
  let split: QuickSplit
  before(async () => { split = await splitQuickTests(TEST_FILES) })

  it('takes every test file once: in the quick loop or left out', () => {
    assert.deepEqual([...split.quick, ...split.leftOut.keys()].sort(), [...TEST_FILES].sort())
  })

  it('runs the tests that build the app in this process, the client\'s among them, and the unit tests', () => {
    for (const file of ['test/http/list-pets.test.ts', 'test/process/idempotency-sweeper.test.ts', 'packages/client/test/petstore-client.test.ts', 'test/store/sqlite/store.test.ts', 'test/domain/api-keys.test.ts', 'test/legs.test.ts']) {
      assert.ok(split.quick.includes(file), file)
    }
  })

  it('leaves out the tests that start a process, a browser, a tool or a cluster, naming through what', () => {
    const through = {
      'test/process/workers.test.ts': 'test/support/cli.ts',
      'test/process/crash-safety.test.ts': 'test/support/cli.ts',
      'test/http/cors.test.ts': 'test/support/chromium.ts',
      'packages/client/test/installed.test.ts': 'packages/client/test/packed.ts',
      'test/deploy/prometheus-rules.test.ts': 'test/support/prometheus-tools.ts',
      'test/ha/cluster.test.ts': 'test/support/ha-cluster.ts',
      'test/process/busy-neighbours.test.ts': 'test/support/neighbours.ts',
      'test/bench/smoke.test.ts': 'test/bench/smoke.test.ts'
    }
    for (const [file, module] of Object.entries(through)) assert.ok(split.leftOut.get(file)?.includes(module), `${file}: ${split.leftOut.get(file)?.join()}`)
  })

  it('names what it leaves out in one line, by module', () => {
    const line = leftOutLine(split)
    const [, count, modules] = /^test:quick leaves out the (\d+) test files that start a program, through (.+) or themselves: npm test runs them$/.exec(line) ?? []
    assert.equal(Number(count), split.leftOut.size, line)
    for (const module of ['chromium', 'cli', 'ha-cluster', 'packed']) assert.ok(modules?.split(', ').includes(module), line)
  })
})
