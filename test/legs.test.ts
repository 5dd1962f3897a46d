/**
 * The legs of the suite beside SQLite: PostgreSQL, PgBouncer, Redis, Chromium. Where a leg is
 * set up, a test that it answers; where it is not, the one line a run prints for it (the files
 * that need it leave it out silently, or with a skip line of their own); and under CI=true,
 * where .ci/run provides every leg, a failure instead: CI never passes with a leg left out.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { it } from 'node:test'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { CHROMIUM, chromiumMissing } from './support/chromium.js'
import { query } from './support/database.js'
import { PGBOUNCER_SKIPPED, POSTGRES_SKIPPED } from './support/helper.js'

interface Leg {
  name: string
  /** False when the leg is not set up here. */
  setUp: boolean
  skipped: string
  answers: () => Promise<void>
}

async function selectOne (url: string): Promise<void> {
  assert.deepEqual(await query(url, 'SELECT 1 AS one'), [{ one: 1 }])
}

const { TEST_DATABASE_URL, TEST_PGBOUNCER_URL, TEST_REDIS_URL } = process.env
const legs: Leg[] = [
  { name: 'PostgreSQL', setUp: TEST_DATABASE_URL !== undefined, skipped: POSTGRES_SKIPPED, answers: async () => await selectOne(TEST_DATABASE_URL!) },
  { name: 'PgBouncer', setUp: TEST_DATABASE_URL !== undefined && TEST_PGBOUNCER_URL !== undefined, skipped: PGBOUNCER_SKIPPED, answers: async () => await selectOne(TEST_PGBOUNCER_URL!) },
  {
    name: 'Redis',
    setUp: TEST_REDIS_URL !== undefined,
    skipped: 'Redis tests skipped: TEST_REDIS_URL is not set',
    answers: async () => {
      const redis = new Redis(TEST_REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 0 })
      try {
        await redis.connect()
        assert.equal(await redis.ping(), 'PONG')
      } finally {
        redis.disconnect()
      }
    }
  },
  {
    name: 'Chromium',
    setUp: chromiumMissing() === false,
    skipped: `Chromium tests skipped: ${chromiumMissing()}`,
    answers: async () => {
      const { stdout } = await promisify(execFile)(CHROMIUM, ['--version'], { timeout: 10_000 })
      assert.match(stdout, /^Chromium \d+/)
    }
  }
]

const inCi = process.env.CI === 'true'
for (const leg of legs) {
  if (leg.setUp) {
    it(`${leg.name} answers`, leg.answers)
  } else if (inCi) {
    it(`${leg.name} is set up in CI`, () => assert.fail(`CI=true, yet ${leg.skipped}: .ci/run provides every leg`))
  } else {
    it(leg.name, { skip: leg.skipped }, () => {})
  }
}
