/** Ids of new animals on SQLite, chosen by us rather than by INTEGER PRIMARY KEY. */
import { INT64_MAX } from '../../schemas/int64.js'
import { NoIdLeft } from '../store-errors.js'
import type { Statements } from './connection.js'

/**
 * Hands out ids one above the highest, as SQLite would; but once 2^63 − 1 is taken SQLite
 * picks random unused ids below it (https://www.sqlite.org/autoinc.html), which keyset
 * paging skips: then none is left. Call it inside the write transaction that inserts.
 * @throws NoIdLeft
 * @example const nextId = petIdAllocator(sql); sql('INSERT INTO pets (id, …) VALUES (?, …)').run(nextId(), …)
 */
export function petIdAllocator (sql: Statements): () => bigint {
  let next: bigint | undefined
  return () => {
    // Read on the first create only: a batch of replays reads nothing.
    next ??= ((sql('SELECT max(id) FROM pets').pluck().get() as bigint | null) ?? 0n) + 1n
    if (next > INT64_MAX) throw new NoIdLeft()
    return next++
  }
}
