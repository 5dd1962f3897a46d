/**
 * The storage interface the domain sees. One adapter per database
 * (`sqlite/`, `postgres/`), with the same file names; rows never leave an adapter.
 */
import type { Int64 } from '../schemas/kinds.js'
import type { Pet, PetStatus } from '../schemas/pets.js'

export interface NewPetRecord {
  name: string
  categoryId: Int64
  status: PetStatus
}

/** An `Idempotency-Key` as stored: scoped to the API key that sent it. */
export interface IdempotencyRecord {
  /** SHA-256 of the API key, hex: the same key on every instance. */
  scope: string
  key: string
  /** SHA-256 of the canonical JSON of the request body. */
  fingerprint: string
}

export interface CreateRequest {
  pet: NewPetRecord
  idempotency?: IdempotencyRecord
}

export type CreateOutcome =
  | { kind: 'created', pet: Pet }
  | { kind: 'replayed', pet: Pet }
  | { kind: 'key_reused' }

export interface ListPetsOptions {
  limit: number
  status?: PetStatus
  /** Keyset paging: only ids above this one. */
  afterId?: Int64
}

export interface ApiKeyRecord {
  id: number
  name: string
  /** SHA-256 of the key, hex. */
  keyHash: string
  createdAt: string
  revokedAt: string | null
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  /** Applies pending migrations; safe when several instances start at once. */
  migrate (): Promise<number[]>
  /** Resolves when the database answers a query. */
  ping (): Promise<void>
  /**
   * A number that changes whenever the animals may have changed, by this process or
   * any other; undefined when the store cannot tell cheaply (then nothing is cached).
   * Synchronous: it is asked on every list request.
   */
  petsVersion (): number | undefined
  close (): Promise<void>

  listPets (options: ListPetsOptions): Promise<Pet[]>
  /**
   * One animal as the API's JSON body (the Pet schema's bytes), built by the database.
   * A store that can answer at once does (SQLite): a get then makes no promise.
   */
  findPetJson (id: Int64): string | undefined | Promise<string | undefined>
  /**
   * Creates animals in one transaction and one durable commit (group commit).
   * An idempotency key seen before (within `idempotencyTtlMs`) replays its animal
   * instead of creating one, or reports the key reused with another body.
   */
  createPets (requests: CreateRequest[], idempotencyTtlMs: number): Promise<CreateOutcome[]>
  /** Inserts animals with their ids as given (import); one transaction. */
  importPets (pets: Pet[]): Promise<void>
  /** Inserts animals with ids the database assigns, so none is reused (seed); one transaction. */
  insertPets (pets: NewPetRecord[]): Promise<void>
  /** Every animal in id order, a page at a time (export). */
  exportPets (pageSize: number): AsyncIterable<Pet[]>
  /** Deletes idempotency keys older than the instant; returns how many. */
  sweepIdempotencyKeys (olderThan: Date): Promise<number>

  /** Returns undefined when a key has that name already. */
  insertApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined>
  findApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined>
  listApiKeys (): Promise<ApiKeyRecord[]>
  /** Returns false when no active key has that name. */
  revokeApiKey (name: string): Promise<boolean>
  /** Forgets a key nobody ever received (its printing failed), so its name is free again. */
  deleteApiKey (name: string): Promise<void>

  /** A random secret created once per database (signs cursors); shared by every instance. */
  secret (name: string): Promise<Buffer>
}
