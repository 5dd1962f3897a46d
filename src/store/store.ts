/**
 * The storage interface the domain sees: async, domain values in and out, and the
 * store's own errors (store-errors.ts). One adapter per database (`sqlite/`,
 * `postgres/`) with the same file names; rows never leave an adapter.
 */
import type { Int64 } from '../schemas/int64.js'
import type { Pet, PetStatus } from '../schemas/pets.js'
import type { ApiKeyScope } from '../schemas/scopes.js'

/** Which database answered a read: the standby, the primary asked first, or the primary after the standby failed (read-routing.ts). */
export type ReadTarget = 'standby' | 'primary' | 'fallback'
export type ReadCounts = Readonly<Record<ReadTarget, number>>

export interface NewPetRecord {
  name: string
  categoryId: Int64
  status: PetStatus
}

/** An `Idempotency-Key` to record with a new animal, scoped to the API key name that sent it. */
export interface IdempotencyClaim {
  /** SHA-256 of the API key's name, hex: the same on every instance and across a rotation. */
  scope: string
  key: string
  /** SHA-256 of the request's JSON value. */
  fingerprint: string
  /** A record of the key older than this is expired: taken as absent, and replaced. */
  notBefore: Date
}

export type CreateResult =
  | { kind: 'created', pet: Pet }
  /** A live record of the claimed key exists: nothing was created. */
  | { kind: 'key_taken', fingerprint: string, pet: Pet }

export interface ListPetsOptions {
  limit: number
  status?: PetStatus
  /** Keyset paging: only ids above this one. */
  afterId?: Int64
}

/** A stored key. */
export interface ApiKeyRecord {
  id: number
  name: string
  /** SHA-256 of the key, hex. */
  keyHash: string
  scopes: ApiKeyScope[]
  createdAt: Date
  /** From this instant on the key is refused; null: never. */
  expiresAt: Date | null
  /** The seconds of an `--expires-in`, restarted by a rotation; null for a fixed instant or none. */
  lifetimeSeconds: number | null
  /** Requests a minute, replacing RATE_LIMIT (0: none); null follows RATE_LIMIT. */
  rateLimit: number | null
  lastUsedAt: Date | null
  /** Null for the name's current key; for a rotated-out key, the instant its grace ends. */
  retiresAt: Date | null
  revokedAt: Date | null
}

/** A row of the api_keys table in either database: `T` its instants as the driver reads them, `N` its integers. */
export interface ApiKeyColumns<T, N> {
  id: N
  name: string
  key_hash: string
  /** Comma-separated. */
  scopes: string
  created_at: T
  expires_at: T | null
  lifetime_seconds: N | null
  rate_limit: N | null
  last_used_at: T | null
  retires_at: T | null
  revoked_at: T | null
}

/**
 * The key a row holds, its instants and integers read by the adapter's own functions.
 * @example columnsToApiKey(row, (text) => new Date(text), Number) // SQLite's ISO text and bigints
 */
export function columnsToApiKey<T, N> (row: ApiKeyColumns<T, N>, instant: (value: T) => Date, integer: (value: N) => number): ApiKeyRecord {
  const orNull = <V, R>(value: V | null, read: (value: V) => R): R | null => value === null ? null : read(value)
  return {
    id: integer(row.id),
    name: row.name,
    keyHash: row.key_hash,
    scopes: row.scopes.split(',') as ApiKeyScope[],
    createdAt: instant(row.created_at),
    expiresAt: orNull(row.expires_at, instant),
    lifetimeSeconds: orNull(row.lifetime_seconds, integer),
    rateLimit: orNull(row.rate_limit, integer),
    lastUsedAt: orNull(row.last_used_at, instant),
    retiresAt: orNull(row.retires_at, instant),
    revokedAt: orNull(row.revoked_at, instant)
  }
}

/** A key to store as the current key of its name. */
export type NewApiKeyRecord = Omit<ApiKeyRecord, 'id' | 'lastUsedAt' | 'retiresAt' | 'revokedAt'>

/** A key to store as the new current key of a name, the one it replaces retiring. */
export interface RotationRecord {
  /** The name's current key, as read before: the rotation is refused if it is current no more. */
  replacedId: number
  /** When the replaced key stops working. */
  graceEndsAt: Date
  /** The new key; a key of the name still retiring from an earlier rotation ends at its `createdAt`. */
  key: NewApiKeyRecord
}

/** A checked backup, as recorded in the database. */
export interface BackupRecord {
  /** When the copy's snapshot began: everything committed before it is in the copy. */
  takenAt: Date
  file: string
  bytes: number
  animals: number
}

export interface BackupOptions {
  /** Called every fraction of a second while the copy grows. */
  onProgress?: (copiedBytes: number, totalBytes: number) => void
  /** Aborted: the copy is discarded once SQLite has finished writing it. */
  signal?: AbortSignal
}

/** How long a call beyond the next turn waits for a connection at most, unless told otherwise (POOL_WAIT). */
export const POOL_WAIT_DEFAULT_MS = 1_000

/** The calls waiting for a connection (src/store/slots.ts), read from memory: never a call to the database. */
export interface ConnectionWaits {
  /** Calls waiting now. */
  count: () => number
  /** How long the oldest of them has waited, in ms, while a call asking now would wait beyond the next turn of the connections; else 0. */
  oldestMs: () => number
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  /** Calls waiting for a connection: PostgreSQL's pool; on SQLite, creates waiting for the writer. */
  readonly waits: ConnectionWaits
  /** Applies pending migrations (migrations.ts); safe when several instances start at once. */
  migrate (): Promise<number[]>
  /** Resolves when the database answers a query. */
  ping (): Promise<void>
  close (): Promise<void>

  /** Animals in ascending id order; the page may be shared with other callers, so it is read-only. */
  listPets (options: ListPetsOptions): Promise<readonly Pet[]>
  findPet (id: Int64): Promise<Pet | undefined>
  /**
   * Stores a new animal durably: resolved once it is committed. With a claim, the key is
   * recorded in the same transaction, unless a live record of it exists: then nothing is
   * stored and that record's fingerprint and animal come back.
   * @throws NoIdLeft, StoreUnavailable
   */
  createPet (pet: NewPetRecord, claim?: IdempotencyClaim): Promise<CreateResult>
  /** Inserts animals with their ids as given (import); one transaction. */
  importPets (pets: Pet[]): Promise<void>
  /** Inserts animals with ids the database assigns, so none is reused (seed); one transaction. */
  insertPets (pets: NewPetRecord[]): Promise<void>
  /** Brings the query planner's statistics up to date after a bulk load, so the lists that follow plan on what is there. */
  analyze (): Promise<void>
  /**
   * Deletes at most `limit` idempotency keys recorded before the instant, in one short
   * statement; returns how many. The sweep's loop is src/process/idempotency-sweeper.ts.
   */
  deleteIdempotencyKeys (olderThan: Date, limit: number): Promise<number>

  /** Returns undefined when a key has that name already. */
  insertApiKey (key: NewApiKeyRecord): Promise<ApiKeyRecord | undefined>
  /**
   * In one transaction: the replaced key retires at `graceEndsAt`, a key still retiring ends,
   * and the new key becomes current. Returns undefined, storing nothing, when the replaced key
   * is no longer its name's current key, or is revoked.
   */
  rotateApiKey (rotation: RotationRecord): Promise<ApiKeyRecord | undefined>
  findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined>
  /** Every key, current, retiring and past, in the order of issue. */
  listApiKeys (): Promise<ApiKeyRecord[]>
  /** Revokes every key of the name (current and retiring); returns false when none was left to revoke. */
  revokeApiKey (name: string): Promise<boolean>
  /** Records last uses, one batch: a use never moves a key's lastUsedAt back. */
  recordApiKeyUses (uses: ReadonlyArray<{ keyHash: string, at: Date }>): Promise<void>
  /** Forgets a key nobody ever received (its printing failed), so its name is free again. */
  deleteApiKey (name: string): Promise<void>

  /**
   * SQLite only (PostgreSQL has pg_dump): writes a checked copy of the database to `file`,
   * replacing it, and records it; a failure leaves `file` as it was and no temporary file.
   * @throws BackupFailed
   */
  backup?: (file: string, options?: BackupOptions) => Promise<BackupRecord>
  /** The newest backup's `takenAt`, else when the database was created; undefined where backups are not ours (PostgreSQL). */
  lastBackupAt (): Promise<Date | undefined>
  /** Reads served by each target since the start, when a standby serves reads (read-routing.ts). */
  readCounts?: () => Promise<ReadCounts>

  /** A random secret created once per database (signs cursors); shared by every instance. */
  secret (name: string): Promise<Buffer>
}

type Method = (...args: unknown[]) => Promise<unknown>

/**
 * A store whose every method is `wrap`'s replacement of the adapter's own: how the store's
 * errors and its traces are laid over an adapter. `wrap` returns the method to keep it as it is.
 * @example wrapMethods(store, (name, method) => async (...args) => { console.log(name); return await method(...args) })
 */
export function wrapMethods<S extends object> (store: S, wrap: (name: string, method: Method) => Method): S {
  const wrapped = { ...store }
  for (const [name, method] of Object.entries(store)) {
    if (typeof method === 'function') Object.assign(wrapped, { [name]: wrap(name, (method as Method).bind(store)) })
  }
  return wrapped
}
