import { INT64_MAX } from '../schemas/int64.js'
import { wrapMethods } from './store.js'

/**
 * The store's own errors: what an adapter throws when the database cannot do what
 * was asked. The HTTP layer alone turns them into statuses and headers.
 */

/** The database cannot answer now (unreachable, busy, out of disk, closed); a retry may succeed. */
export class StoreUnavailable extends Error {
  override name = 'StoreUnavailable'

  /** @example throw new StoreUnavailable('the database is unavailable', { cause: err }) */
  constructor (message = 'the database is unavailable', options?: ErrorOptions) {
    super(message, options)
  }
}

/** A call waited for a connection (the pool's, or the writer's) past its bound: the database does not keep up with the load. */
export class ConnectionWaitExceeded extends Error {
  override name = 'ConnectionWaitExceeded'

  /** @example throw new ConnectionWaitExceeded(1_000) */
  constructor (readonly waitedMs: number) {
    super(`no database connection was free within ${waitedMs} ms`)
  }
}

/** Every id up to 2^63 − 1 lies below the highest one taken (an import put it there): a new animal has none. */
export class NoIdLeft extends Error {
  override name = 'NoIdLeft'

  constructor (message = `no id is left for a new animal: ${INT64_MAX}, the highest, is taken`) {
    super(message)
  }
}

/**
 * The driver's own words when the store wrapped them, else the message.
 * @example driverReason(err) // 'connect ECONNREFUSED 127.0.0.1:5432', 'database is locked'
 */
export function driverReason (err: Error): string {
  const cause = err.cause as Error | undefined
  return (cause === undefined ? '' : errorWords(cause)) || err.message
}

/** An error's own words: a refused connection to a name with two addresses is an AggregateError with no message, only a code. */
export function errorWords (err: Error): string {
  return err.message || ((err as NodeJS.ErrnoException).code ?? '')
}

/**
 * Wraps every method of an adapter so that a driver's failure a retry may cure becomes
 * StoreUnavailable (its cause kept); any other error passes as it is.
 * @example return withStoreErrors(store, (err) => err instanceof Database.SqliteError && err.code === 'SQLITE_BUSY')
 */
export function withStoreErrors<S extends object> (store: S, isTransient: (err: unknown) => boolean): S {
  return wrapMethods(store, (_name, method) => async (...args) => {
    try {
      return await method(...args)
    } catch (err) {
      throw isTransient(err) ? new StoreUnavailable(undefined, { cause: err }) : err
    }
  })
}

/** A backup could not be written or failed its check; nothing was left at its file. */
export class BackupFailed extends Error {
  override name = 'BackupFailed'
}
