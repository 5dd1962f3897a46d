/**
 * Every store call goes through here: a driver's failure that a retry may cure
 * (busy, I/O, connection lost) becomes `unavailable`, anything else stays as it is.
 */
import { AppError } from '../domain/errors.js'
import type { Store } from './store.js'

export const RETRY_AFTER_SECONDS = 1

/** @example throw storeUnavailable() */
export function storeUnavailable (): AppError {
  return new AppError('unavailable', 'the database is unavailable; retry later', { 'retry-after': String(RETRY_AFTER_SECONDS) })
}

// Methods that answer at once, on the hot path: wrapped without a promise.
const SYNCHRONOUS = new Set<string>(['petsVersion'] satisfies Array<keyof Store>)

/**
 * Wraps each call of the store so that `classify(err)` decides which errors mean
 * "unavailable"; `onError` sees each such error (metrics, logs).
 */
export function translateStoreErrors (store: Store, isUnavailable: (err: unknown) => boolean): Store {
  const translate = (err: unknown): unknown => {
    if (!isUnavailable(err)) return err
    const unavailable = storeUnavailable()
    unavailable.cause = err
    return unavailable
  }
  const wrapped: Record<string, unknown> = { kind: store.kind }
  for (const [name, value] of Object.entries(store)) {
    if (typeof value !== 'function') continue
    if (SYNCHRONOUS.has(name)) {
      wrapped[name] = (...args: unknown[]) => {
        try { return value.apply(store, args) } catch (err) { throw translate(err) }
      }
    } else if (name === 'exportPets') {
      wrapped[name] = async function * (...args: unknown[]) {
        try { yield * value.apply(store, args) } catch (err) { throw translate(err) }
      }
    } else {
      wrapped[name] = async (...args: unknown[]) => {
        try { return await value.apply(store, args) } catch (err) { throw translate(err) }
      }
    }
  }
  return wrapped as unknown as Store
}
