import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { StoreUnavailable } from '../../../src/store/store-errors.js'
import { openStore } from '../../../src/store/open-store.js'
import { issueFirstApiKey } from '../../../src/domain/first-api-key.js'
import { backends, createTestDatabase, openTestStore, useTestStore } from '../../support/helper.js'

const newPet = { name: 'rex', categoryId: 1, status: 'available' as const }

for (const postgres of backends('postgres', 'pgbouncer')) {
  describe(`${postgres.name} store`, () => {
    const fixture = useTestStore(postgres.name)

    async function sql<T extends pg.QueryResultRow> (client: pg.Client, text: string): Promise<T[]> {
      return (await client.query<T>(text)).rows
    }

    it('never moves the id sequence down on import, so a create in flight elsewhere keeps its id', async () => {
      for (let i = 0; i < 3; i++) await fixture.store.createPet(newPet)
      const gap = new pg.Client({ connectionString: fixture.database.url })
      const inFlight = new pg.Client({ connectionString: fixture.database.url })
      await Promise.all([gap.connect(), inFlight.connect()])
      try {
        const [{ id: skipped }] = await sql<{ id: string }>(gap, "SELECT nextval(pg_get_serial_sequence('pets', 'id'))::text AS id") as [{ id: string }]
        await sql(inFlight, 'BEGIN')
        const [{ id: held }] = await sql<{ id: string }>(inFlight, "INSERT INTO pets (name, category_id, status) VALUES ('held', 1, 'sold') RETURNING id::text") as [{ id: string }]
        await fixture.store.importPets([{ id: Number(skipped), name: 'imported', categoryId: 1, status: 'sold' }])
        await sql(inFlight, 'COMMIT')
        const outcome = await fixture.store.createPet(newPet)
        assert.equal(outcome?.kind, 'created')
        assert.ok(outcome.kind === 'created' && Number(outcome.pet.id) > Number(held))
      } finally {
        await Promise.all([gap.end(), inFlight.end()])
      }
    })

    it('still moves the sequence up past imported ids', async () => {
      await fixture.store.importPets([{ id: 1_000, name: 'imported', categoryId: 1, status: 'sold' }])
      const outcome = await fixture.store.createPet(newPet)
      assert.deepEqual(outcome?.kind === 'created' && outcome.pet.id, 1_001)
    })

    it('gives each of many concurrent creates its own animal, even when they are committed together', async () => {
      const pets = Array.from({ length: 150 }, (_, i) => ({ name: `batch ${i}`, categoryId: 1 + i, status: (['available', 'pending', 'sold'] as const)[i % 3]! }))
      const outcomes = await Promise.all(pets.map(async (pet) => await fixture.store.createPet(pet)))
      const created = outcomes.map((outcome) => outcome.kind === 'created' ? outcome.pet : assert.fail(outcome.kind))
      assert.deepEqual(created.map(({ name, categoryId, status }) => ({ name, categoryId, status })), pets)
      assert.equal(new Set(created.map((pet) => pet.id)).size, created.length)
      for (const pet of created) assert.deepEqual(await fixture.store.findPet(pet.id), pet)
    })

    it('gives every new connection the server timeouts migrate recorded, through a pooler too', async () => {
      const client = new pg.Client({ connectionString: fixture.database.url })
      await client.connect()
      try {
        assert.deepEqual(await sql(client, 'SHOW statement_timeout'), [{ statement_timeout: '4s' }])
        assert.deepEqual(await sql(client, 'SHOW idle_in_transaction_session_timeout'), [{ idle_in_transaction_session_timeout: '20s' }])
      } finally {
        await client.end()
      }
    })

    it('has a statement that runs past the server timeout cancelled by the server (57014), before the client gives up', async () => {
      const locker = new pg.Client({ connectionString: fixture.database.url })
      await locker.connect()
      try {
        await sql(locker, 'BEGIN')
        await sql(locker, 'LOCK TABLE pets IN ACCESS EXCLUSIVE MODE')
        await assert.rejects(fixture.store.createPet(newPet),
          (err) => err instanceof StoreUnavailable && (err.cause as { code?: string }).code === '57014')
      } finally {
        await locker.end()
      }
    })

    it('reports a database in read-only mode (a standby during failover) as unavailable, and reads still work', async () => {
      const database = await createTestDatabase(postgres.name)
      try {
        const writable = await openTestStore({ ...database, url: database.directUrl })
        await writable.createPet(newPet)
        await writable.close()
        const admin = new pg.Client({ connectionString: database.directUrl })
        await admin.connect()
        // Made read-only before a pooler holds a connection to it, so every connection is.
        await sql(admin, `ALTER DATABASE ${pg.escapeIdentifier(new URL(database.directUrl).pathname.slice(1))} SET default_transaction_read_only = on`)
        await admin.end()
        const readOnly = await openStore(database.url)
        try {
          assert.ok((await readOnly.listPets({ limit: 1 })).length === 1)
          await assert.rejects(readOnly.createPet(newPet), (err) => err instanceof StoreUnavailable)
        } finally {
          await readOnly.close()
        }
      } finally {
        await database.drop()
      }
    })

    it('leaves a constraint violation as it is (a bug or bad input, not an outage)', async () => {
      await assert.rejects(fixture.store.importPets([{ id: 1, name: 'again', categoryId: 1, status: 'sold' }]),
        (err) => !(err instanceof StoreUnavailable) && (err as { code?: string }).code === '23505')
    })

    it('leaves nothing behind when a write times out: the server cancels it before the client gives up', async () => {
      const database = await createTestDatabase(postgres.name)
      const store = await openTestStore(database, { timeoutMs: 500 })
      const locker = new pg.Client({ connectionString: database.url })
      await locker.connect()
      const count = async (): Promise<number> => Number((await sql<{ n: string }>(locker, "SELECT count(*) AS n FROM pets WHERE name = 'timed out'"))[0]!.n)
      try {
        await sql(locker, 'BEGIN')
        // The lock outlives the idle limit the store's short timeouts gave every connection.
        await sql(locker, 'SET LOCAL idle_in_transaction_session_timeout = 0')
        await sql(locker, 'LOCK TABLE pets, api_keys IN ACCESS EXCLUSIVE MODE')
        await assert.rejects(store.insertPets([{ ...newPet, name: 'timed out' }]), (err) => err instanceof StoreUnavailable)
        await assert.rejects(store.insertApiKey({ name: 'timed-out', keyHash: 'f'.repeat(64), scopes: ['pets:read'], createdAt: new Date(), expiresAt: null, lifetimeSeconds: null, rateLimit: null }), (err) => err instanceof StoreUnavailable)
        await sql(locker, 'COMMIT')
        await new Promise((resolve) => setTimeout(resolve, 1_000)) // a late commit would land within this
        assert.equal(await count(), 0, 'the insert did not commit once the lock was gone')
        assert.deepEqual((await store.listApiKeys()).filter((key) => key.name === 'timed-out'), [])
      } finally {
        await locker.end()
        await store.close()
        await database.drop()
      }
    })

    it('fails the first start when its key cannot be stored, rather than serving with no key', async () => {
      const database = await createTestDatabase(postgres.name)
      const store = await openTestStore(database, { timeoutMs: 500 })
      const locker = new pg.Client({ connectionString: database.url })
      await locker.connect()
      try {
        await sql(locker, 'BEGIN')
        await sql(locker, 'LOCK TABLE api_keys IN EXCLUSIVE MODE')
        await assert.rejects(issueFirstApiKey(store, 0), (err) => err instanceof StoreUnavailable)
      } finally {
        await locker.end()
        await store.close()
        await database.drop()
      }
    })

    it('answers unavailable, not a crash, when the pool is already closed', async () => {
      const closed = await openStore(fixture.database.url)
      await closed.close()
      await assert.rejects(closed.listPets({ limit: 1 }), (err) => err instanceof StoreUnavailable)
    })
  })
}
