/**
 * Creates without an Idempotency-Key, coalesced when the pool is busy: a create goes at once
 * while fewer than `maxInFlight` inserts are in flight (one per pooled connection); past that
 * it waits, and the creates that waited go together as the next insert, one statement of up to
 * BATCH_MAX rows. Each 201 still comes after the commit of its row; a failed statement fails
 * every create in it, none of which was committed (one statement is one transaction), and
 * leaves nothing behind in the session, so it works through a transaction-mode pooler.
 */
import type { NewPetRecord } from '../store.js'

/** Rows of one INSERT at most. */
const BATCH_MAX = 64

interface Waiting<R> {
  pet: NewPetRecord
  resolve: (row: R) => void
  reject: (err: unknown) => void
}

/**
 * Batches calls of `insert`, which must give back one row per pet, in their order.
 * @example const create = batchCreates(async (pets) => await insertRows(pets), 10); const row = await create(pet)
 */
export function batchCreates<R> (insert: (pets: NewPetRecord[]) => Promise<R[]>, maxInFlight: number): (pet: NewPetRecord) => Promise<R> {
  const waiting: Array<Waiting<R>> = []
  let inFlight = 0

  function flush (): void {
    const batch = waiting.splice(0, BATCH_MAX)
    inFlight++
    insert(batch.map((each) => each.pet)).then((rows) => {
      if (rows.length !== batch.length) throw new Error(`${batch.length} pets inserted, ${rows.length} rows returned`)
      batch.forEach((each, index) => { each.resolve(rows[index]!) })
    }).catch((err: unknown) => {
      for (const each of batch) each.reject(err)
    }).finally(() => {
      inFlight--
      if (waiting.length > 0 && inFlight < maxInFlight) flush()
    })
  }

  return async (pet) => await new Promise<R>((resolve, reject) => {
    waiting.push({ pet, resolve, reject })
    if (inFlight < maxInFlight) flush()
  })
}
