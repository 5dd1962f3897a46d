import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { freePort, startCli } from './support/cli.js'

describe('petstore serve with GETPET_SUNSET before the deprecation', () => {
  it('stops with one line naming the variable and exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-sunset-'))
    const cli = startCli(['serve'], {
      GETPET_SUNSET: '2025-06-01T00:00:00Z',
      PORT: String(await freePort()),
      DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}`,
      PETSTORE_API_KEYS: 'sunset-test-key-0123456789'
    })
    // A server that starts anyway is stopped, so the test fails instead of hanging.
    const deadline = setTimeout(() => cli.child.kill('SIGKILL'), 15_000)
    try {
      assert.equal(await cli.exited, 1)
      assert.equal(cli.stderr(), 'petstore: GETPET_SUNSET: must not be before 2026-01-01T00:00:00Z, when getPet was deprecated\n')
    } finally {
      clearTimeout(deadline)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
