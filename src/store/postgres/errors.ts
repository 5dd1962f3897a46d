import type { Store } from '../store.js'
import { translateStoreErrors } from '../store-errors.js'

// SQLSTATE classes a retry can cure: connection exception, insufficient resources,
// operator intervention (57P01 admin shutdown…), transaction rollback (serialization, deadlock).
const TRANSIENT_SQLSTATE = /^(08|53|57|40)/

function isUnavailable (err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as NodeJS.ErrnoException).code
  if (typeof code === 'string') return TRANSIENT_SQLSTATE.test(code) || /^E[A-Z]+$/.test(code) // SQLSTATE, or a socket error (ECONNREFUSED…)
  // pg reports a lost connection and its timeouts as plain Errors without a code.
  return err.constructor === Error
}

export function translatePostgresError (store: Store): Store {
  return translateStoreErrors(store, isUnavailable)
}
