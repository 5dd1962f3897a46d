import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { ERROR_CATALOGUE } from '../../src/schemas/error.js'
import { ROOT } from '../support/constants.js'

describe('docs/errors.md', () => {
  const rows = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8')
    .split('\n')
    .flatMap((line) => {
      const match = /^\| `([a-z_]+)` \| (\d{3}) \| ([^|]+) \|/.exec(line)
      return match === null ? [] : [[match[1]!, { status: Number(match[2]), meaning: match[3]!.trim() }] as const]
    })

  it('has one row per code of the catalogue, with its status and meaning, and no other', () => {
    assert.deepEqual(Object.fromEntries(rows), ERROR_CATALOGUE)
    assert.equal(rows.length, Object.keys(ERROR_CATALOGUE).length, 'no code has two rows')
  })
})
