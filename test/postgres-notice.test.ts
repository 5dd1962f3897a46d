// The one line a run without PostgreSQL prints: backends() leaves it out silently in every file.
import { it } from 'node:test'
import { POSTGRES_SKIPPED } from './helper.js'

if (process.env.TEST_DATABASE_URL === undefined) it('PostgreSQL', { skip: POSTGRES_SKIPPED }, () => {})
