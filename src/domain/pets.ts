/**
 * The animals catalogue: what the three operations do, apart from HTTP.
 */
import { createHash } from 'node:crypto'
import type { Int64 } from '../schemas/kinds.js'
import type { NewPet, Pet, PetStatus } from '../schemas/pets.js'
import type { CreateOutcome, CreateRequest, Store } from '../store/store.js'
import type { Caller } from './api-keys.js'
import { CursorCodec } from './cursor.js'
import { AppError } from './errors.js'
import { GroupCommit } from './group-commit.js'
import { VersionedCache } from './versioned-cache.js'

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
const MAX_BATCH = 256
const PAGE_CACHE_SIZE = 1024

/** Shared by every request that is served it: never changed once made. */
export interface PetPage {
  readonly pets: readonly Pet[]
  /** Cursor of the next page; undefined on the last page. */
  next: string | undefined
}

export interface CreatedPet {
  pet: Pet
  /** True when an earlier request with the same Idempotency-Key is replayed. */
  replayed: boolean
}

export class PetCatalogue {
  readonly #store: Store
  readonly #cursors: CursorCodec
  readonly #creates: GroupCommit<CreateRequest, CreateOutcome>
  readonly #pages = new VersionedCache<PetPage>(PAGE_CACHE_SIZE)
  /** Idempotency keys whose request has not been answered yet (this process). */
  readonly #inFlight = new Set<string>()

  /** @example new PetCatalogue(store, await store.secret('cursor')) */
  constructor (store: Store, cursorSecret: Buffer) {
    this.#store = store
    this.#cursors = new CursorCodec(cursorSecret)
    this.#creates = new GroupCommit((batch) => store.createPets(batch, IDEMPOTENCY_TTL_MS), MAX_BATCH)
  }

  /**
   * A page in ascending id order, and the cursor of the next one when more animals match.
   * Pages are served again from memory until the animals change (where the store can tell).
   */
  async listPets (query: { limit: number, status?: PetStatus, cursor?: string }): Promise<PetPage> {
    const { limit, status } = query
    const afterId = query.cursor === undefined ? undefined : this.#cursors.decode(query.cursor, status).afterId
    // Read before the rows: a change after this read only makes the page newer than its version.
    const version = this.#store.petsVersion()
    const key = `${limit}:${status ?? ''}:${afterId ?? ''}`
    const cached = version === undefined ? undefined : this.#pages.get(version, key)
    if (cached !== undefined) return cached
    // One row more than asked tells whether a next page exists.
    const rows = await this.#store.listPets({ limit: limit + 1, status, afterId })
    const more = rows.length > limit
    const pets = more ? rows.slice(0, limit) : rows
    const next = more ? this.#cursors.encode({ afterId: pets[pets.length - 1]!.id, status }) : undefined
    const page = { pets, next }
    if (version !== undefined) this.#pages.set(version, key, page)
    return page
  }

  /**
   * Marks an idempotency key as in flight from the moment its request arrives (before
   * its body is read), so a retry sent while the first is still uploading or committing
   * gets 409 instead of racing it. In memory: a key whose request died with the process
   * is free again on restart.
   * @returns releases the key; safe to call more than once
   * @throws AppError idempotency_conflict while another request holds the key
   * @example const release = catalogue.holdIdempotencyKey(caller, key); try { … } finally { release() }
   */
  holdIdempotencyKey (caller: Caller, idempotencyKey: string): () => void {
    const flightKey = `${caller.keyHash}\n${idempotencyKey}`
    if (this.#inFlight.has(flightKey)) {
      throw new AppError('idempotency_conflict', 'Idempotency-Key: a request with this key is still in progress; retry after it completes')
    }
    this.#inFlight.add(flightKey)
    let held = true
    return () => {
      if (held) this.#inFlight.delete(flightKey)
      held = false
    }
  }

  /**
   * Creates an animal; with an idempotency key (held by the caller with
   * holdIdempotencyKey), a repeat of the same request replays the first animal
   * instead of creating another.
   */
  async createPet (newPet: NewPet, caller: Caller, idempotencyKey?: string): Promise<CreatedPet> {
    const pet = { name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? 'available' }
    const idempotency = idempotencyKey === undefined
      ? undefined
      : { scope: caller.keyHash, key: idempotencyKey, fingerprint: fingerprint(newPet) }
    const outcome = await this.#creates.submit({ pet, idempotency })
    if (outcome.kind === 'key_reused') {
      throw new AppError('idempotency_key_reused', 'Idempotency-Key: was used with a different body; use a new key for a new animal')
    }
    return { pet: outcome.pet, replayed: outcome.kind === 'replayed' }
  }

  /**
   * An animal by id, as its JSON body. Read from the database every time: the indexed
   * read that builds the JSON (2.5 µs in a loop) stays flat where ids are too many for a
   * cache to hit, and a hit would still pay the cache's 0.9 µs check that it is valid.
   * Answered at once where the store answers at once (SQLite), else with a promise.
   */
  getPetJson (id: Int64): string | Promise<string> {
    const json = this.#store.findPetJson(id)
    return json instanceof Promise ? json.then((found) => found ?? notFound(id)) : json ?? notFound(id)
  }
}

function notFound (id: Int64): never {
  throw new AppError('not_found', `petId: no animal with id ${id}`)
}

/** "Same body" means the same JSON value: key order and spacing do not count. */
function fingerprint (newPet: NewPet): string {
  return createHash('sha256').update(JSON.stringify([newPet.name, String(newPet.categoryId), newPet.status ?? null])).digest('hex')
}
