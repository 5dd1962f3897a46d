// The one line a run without PostgreSQL, or without PgBouncer, prints: backends() leaves it out silently in every file.
import { it } from 'node:test'
import { PGBOUNCER_SKIPPED, POSTGRES_SKIPPED } from './helper.js'

if (process.env.TEST_DATABASE_URL === undefined) it('PostgreSQL', { skip: POSTGRES_SKIPPED }, () => {})
else if (process.env.TEST_PGBOUNCER_URL === undefined) it('PgBouncer', { skip: PGBOUNCER_SKIPPED }, () => {})
