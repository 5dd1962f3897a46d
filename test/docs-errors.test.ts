import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { ERROR_STATUS } from '../src/schemas/error.js'

describe('docs/errors.md', () => {
  const rows = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8')
    .split('\n')
    .flatMap((line) => {
      const match = /^\| `([a-z_]+)` \| (\d{3}) \|/.exec(line)
      return match === null ? [] : [[match[1]!, Number(match[2])] as const]
    })

  it('has one row per code of the catalogue, with its status, and no other', () => {
    assert.deepEqual(Object.fromEntries(rows), ERROR_STATUS)
    assert.equal(rows.length, Object.keys(ERROR_STATUS).length)
  })
})
