/**
 * Every store call goes through here: a driver's failure that a retry may cure
 * (busy, I/O, connection lost) becomes `unavailable`, anything else stays as it is.
 */
import { AppError } from '../domain/errors.js'
import { INT64_MAX } from '../schemas/kinds.js'
import type { Store } from './store.js'

export const RETRY_AFTER_SECONDS = 1

/** @example throw storeUnavailable() */
export function storeUnavailable (): AppError {
  return new AppError('unavailable', 'the database is unavailable; retry later', { 'retry-after': String(RETRY_AFTER_SECONDS) })
}

/**
 * The driver's own words when the store wrapped them, else the message.
 * @example driverReason(err) // 'connect ECONNREFUSED 127.0.0.1:5432', 'database is locked'
 */
export function driverReason (err: Error): string {
  const cause = err.cause as NodeJS.ErrnoException | undefined
  // A refused connection to a name with two addresses is an AggregateError with no message, only a code.
  return (cause?.message || cause?.code) ?? err.message
}

/** Retrying soon does not help: an operator must act. A client that honours Retry-After gives up at once. */
export const NO_ID_LEFT_RETRY_AFTER_SECONDS = 3600

/**
 * Every id up to 2^63 − 1 lies below the highest one taken (an import put it there): a new
 * animal has none (docs/errors.md).
 * @example throw noIdLeft()
 */
export function noIdLeft (): AppError {
  return new AppError('unavailable', `no id is left for a new animal: ${INT64_MAX}, the highest, is taken`,
    { 'retry-after': String(NO_ID_LEFT_RETRY_AFTER_SECONDS) })
}

// Methods on the hot path that may answer at once: wrapped without a promise of their own
// (the rejection of a promise they return is translated all the same).
const AT_ONCE = new Set<string>(['petsVersion', 'findPetJson'] satisfies Array<keyof Store>)

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
    if (AT_ONCE.has(name)) {
      wrapped[name] = (...args: unknown[]) => {
        try {
          const result: unknown = value.apply(store, args)
          return result instanceof Promise ? result.catch((err: unknown) => { throw translate(err) }) : result
        } catch (err) {
          throw translate(err)
        }
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
