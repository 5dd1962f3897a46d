/**
 * The animals catalogue: what the three operations do, apart from HTTP, and the
 * rules of Idempotency-Key (in flight, replay, reuse with another body, expiry).
 */
import { createHash } from 'node:crypto'
import type { Int64 } from '../schemas/int64.js'
import type { NewPet, Pet, PetStatus } from '../schemas/pets.js'
import type { Store } from '../store/store.js'
import type { Caller } from './api-keys/verifier.js'
import { CursorCodec } from './cursor.js'
import { IdempotencyKeyInFlight, IdempotencyKeyReused, PetNotFound } from './errors.js'

/** How long a create's Idempotency-Key is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

export interface PetPage {
  pets: Pet[]
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
  /** Idempotency keys whose request has not been answered yet (this process). */
  readonly #inFlight = new Set<string>()

  /** @example new PetCatalogue(store, await store.secret('cursor')) */
  constructor (store: Store, cursorSecret: Buffer) {
    this.#store = store
    this.#cursors = new CursorCodec(cursorSecret)
  }

  /** A page in ascending id order, and the cursor of the next one when more animals match. */
  async listPets (query: { limit: number, status?: PetStatus, cursor?: string }): Promise<PetPage> {
    const { limit, status } = query
    const afterId = query.cursor === undefined ? undefined : this.#cursors.decode(query.cursor, status).afterId
    // One row more than asked tells whether a next page exists.
    const rows = await this.#store.listPets({ limit: limit + 1, status, afterId })
    const more = rows.length > limit
    const pets = rows.slice(0, limit)
    const next = more ? this.#cursors.encode(pets[pets.length - 1]!.id, status) : undefined
    return { pets, next }
  }

  /**
   * Marks an idempotency key as in flight from the moment its request arrives (before
   * its body is read), so a retry sent while the first is still uploading or committing
   * gets 409 instead of racing it. In memory: a key whose request died with the process
   * is free again on restart.
   * @returns releases the key; safe to call more than once
   * @throws IdempotencyKeyInFlight while another request holds the key
   * @example const release = catalogue.holdIdempotencyKey(caller, key); try { … } finally { release() }
   */
  holdIdempotencyKey (caller: Caller, idempotencyKey: string): () => void {
    const flightKey = `${caller.nameHash}\n${idempotencyKey}`
    if (this.#inFlight.has(flightKey)) {
      throw new IdempotencyKeyInFlight()
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
   * holdIdempotencyKey), a repeat of the same request within 24 h replays the first
   * animal instead of creating another.
   * @throws IdempotencyKeyReused when the key came with another body
   */
  async createPet (newPet: NewPet, caller: Caller, idempotencyKey?: string): Promise<CreatedPet> {
    const pet = { name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? 'available' }
    const claim = idempotencyKey === undefined
      ? undefined
      : { scope: caller.nameHash, key: idempotencyKey, fingerprint: fingerprint(newPet), notBefore: new Date(Date.now() - IDEMPOTENCY_TTL_MS) }
    const result = await this.#store.createPet(pet, claim)
    if (result.kind === 'created') return { pet: result.pet, replayed: false }
    if (result.fingerprint !== claim!.fingerprint) {
      throw new IdempotencyKeyReused()
    }
    return { pet: result.pet, replayed: true }
  }

  /** @throws PetNotFound */
  async getPet (id: Int64): Promise<Pet> {
    const pet = await this.#store.findPet(id)
    if (pet === undefined) throw new PetNotFound(id)
    return pet
  }
}

/** "Same body" means the same JSON value: key order and spacing do not count. */
function fingerprint (newPet: NewPet): string {
  return createHash('sha256').update(JSON.stringify([newPet.name, String(newPet.categoryId), newPet.status ?? null])).digest('hex')
}
