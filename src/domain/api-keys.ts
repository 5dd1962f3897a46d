/**
 * API keys. A key is never stored nor logged: only its SHA-256 is kept, and a
 * presented key is found by that hash. The lookup's timing can only tell of the
 * hash, never of the key, so no constant-time comparison is needed after it.
 */
import { hash, randomBytes } from 'node:crypto'
import type { Store } from '../store/store.js'

/** Who called: the name of the key (for metrics) and its hash (scopes idempotency keys). */
export interface Caller {
  keyName: string
  keyHash: string
}

/** @example hashApiKey('ps_abc') // 64 hex characters */
export function hashApiKey (key: string): string {
  return hash('sha256', key)
}

const ISSUED_KEY = /^ps_[A-Za-z0-9_-]{43}$/

/** A new random key: `ps_` and 43 base64url characters (256 bits). */
export function generateApiKey (): string {
  return `ps_${randomBytes(32).toString('base64url')}`
}

/** A key of that name exists already: names are unique. */
export class ApiKeyNameTaken extends Error {
  override name = 'ApiKeyNameTaken'
}

/**
 * Issues a key, stores its hash under `name` and returns the key: the only time it is seen.
 * @throws ApiKeyNameTaken when a key has that name, even one issued a moment ago elsewhere
 * @example const key = await issueApiKey(store, 'ci')
 */
export async function issueApiKey (store: Store, name: string): Promise<string> {
  const key = generateApiKey()
  if (await store.insertApiKey(name, hashApiKey(key)) === undefined) throw new ApiKeyNameTaken(`a key named ${name} exists already`)
  return key
}

const CACHE_TTL_MS = 5_000

/**
 * Checks presented keys against the keys of the environment (`PETSTORE_API_KEYS`)
 * and the active keys of the store. Store answers are cached for 5 s, so a
 * revoked key stops working within 5 s on every instance.
 */
export class ApiKeyVerifier {
  readonly #configured = new Map<string, Caller>()
  readonly #cache = new Map<string, { caller: Caller | undefined, until: number }>()
  readonly #store: Store

  constructor (store: Store, configuredKeys: readonly string[]) {
    this.#store = store
    configuredKeys.forEach((key, index) => {
      const keyHash = hashApiKey(key)
      this.#configured.set(keyHash, { keyName: `env-${index + 1}`, keyHash })
    })
  }

  /**
   * True when `text` is a configured key or has the shape of an issued one; synchronous,
   * so it can screen what is about to be logged.
   * @example verifier.mightBeApiKey('ps_' + 'a'.repeat(43)) // true
   */
  mightBeApiKey (text: string): boolean {
    return ISSUED_KEY.test(text) || this.#configured.has(hashApiKey(text))
  }

  /**
   * The caller, or undefined for an unknown or revoked key.
   * @example const caller = await verifier.verify(token)
   */
  async verify (presented: string): Promise<Caller | undefined> {
    const keyHash = hashApiKey(presented)
    return this.#configured.get(keyHash) ?? this.#cached(keyHash) ?? await this.#fromStore(keyHash)
  }

  #cached (keyHash: string): Caller | undefined {
    const cached = this.#cache.get(keyHash)
    return cached !== undefined && cached.until > Date.now() ? cached.caller : undefined
  }

  async #fromStore (keyHash: string): Promise<Caller | undefined> {
    const now = Date.now()
    const record = await this.#store.findApiKeyByHash(keyHash)
    const caller = record === undefined || record.revokedAt !== null ? undefined : { keyName: record.name, keyHash }
    // Only known keys are cached: random unknown keys must not grow the map.
    if (caller !== undefined) this.#cache.set(keyHash, { caller, until: now + CACHE_TTL_MS })
    else this.#cache.delete(keyHash)
    return caller
  }
}
