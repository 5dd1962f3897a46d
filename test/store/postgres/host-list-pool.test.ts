/**
 * What the host-list pool reads of pg's internals (src/store/postgres/host-list-pool.ts reusable):
 * a pg.Client's `_queryable` and `_ending`, and pg-pool's release reading them. An upgrade of pg
 * that renames them fails here, not in production as a pool that reuses dead connections.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { parseAddress } from '../../../src/store/postgres/address.js'
import { hostListPool, reusable } from '../../../src/store/postgres/host-list-pool.js'
import { skippedFile } from '../../support/helper.js'

const url = process.env.TEST_DATABASE_URL
if (url === undefined) skippedFile('pg internals test skipped: TEST_DATABASE_URL is not set')
else {
  describe('pg internals the host-list pool reads', () => {
    it('a client is queryable once connected, and ending once ended', async () => {
      const client = new pg.Client({ connectionString: url })
      assert.deepEqual(reusable(client), { queryable: true, ending: false }, 'pg.Client sets _queryable and _ending at construction')
      await client.connect()
      assert.deepEqual(reusable(client), { queryable: true, ending: false })
      await client.end()
      assert.equal(reusable(client).ending, true, 'pg.Client sets _ending when it ends')
    })

    it('a client that lost its connection is no longer queryable', async () => {
      const client = new pg.Client({ connectionString: url })
      client.on('error', () => {})
      await client.connect()
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      // pg_terminate_backend returns before the backend exits: the client's end is awaited.
      const ended = new Promise((resolve) => client.once('end', resolve))
      const killer = new pg.Client({ connectionString: url })
      await killer.connect()
      await killer.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
      await killer.end()
      await ended
      await assert.rejects(client.query('SELECT 1'))
      assert.equal(reusable(client).queryable, false, 'pg.Client clears _queryable when its connection is lost')
    })

    it('the pool reads them on release: a client not queryable is discarded, not reused', async () => {
      const pool = hostListPool(parseAddress(url), { max: 2, connectTimeoutMs: 5_000 })
      try {
        const client = await pool.connect()
        assert.equal(pool.totalCount, 1)
        client.release()
        assert.equal(pool.idleCount, 1, 'a queryable client goes back to the pool')
        const again = await pool.connect()
        ;(again as unknown as { dropOnRelease: boolean }).dropOnRelease = true
        again.release()
        assert.equal(pool.totalCount, 0, 'pg-pool reads _queryable on release')
      } finally {
        await pool.end()
      }
    })
  })
}
