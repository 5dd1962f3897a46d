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
  if (await store.insertApiKey({ name, keyHash: hashApiKey(key), scopes: ['pets:read', 'pets:write'], expiresAt: null, lifetimeSeconds: null, rateLimit: null }) === undefined) throw new ApiKeyNameTaken(`a key named ${name} exists already`)
  return key
}

const CACHE_TTL_MS = 5_000
// As long as a throttle window (src/domain/forged-keys.ts): a key in use is never refused
// for its address's failures; revocation still bites within CACHE_TTL_MS, by verify.
const KNOWN_VALID_MS = 60_000
// A few thousand hashes: a flood of forged keys is remembered without growing the memory.
const UNKNOWN_CACHE_SIZE = 4_096

/**
 * Checks presented keys against the keys of the environment (`PETSTORE_API_KEYS`)
 * and the active keys of the store. Store answers are cached for 5 s, known keys
 * and unknown ones alike, so a revoked key stops working within 5 s on every
 * instance and a forged key sent again does not reach the store again.
 */
export class ApiKeyVerifier {
  readonly #configured = new Map<string, Caller>()
  readonly #verified = new Map<string, { caller: Caller, at: number }>()
  // Oldest first (a Map keeps insertion order), so the first entry is the one to drop.
  readonly #unknown = new Map<string, number>()
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
   * True, from memory alone, for a configured key or one the store found active within
   * the last minute: such a key passes the throttle of forged keys.
   * @example if (!verifier.isKnownValid(token)) await refuseIfThrottled(request)
   */
  isKnownValid (presented: string): boolean {
    const keyHash = hashApiKey(presented)
    const verified = this.#verified.get(keyHash)
    return this.#configured.has(keyHash) || (verified !== undefined && Date.now() - verified.at < KNOWN_VALID_MS)
  }

  /**
   * The caller, or undefined for an unknown or revoked key.
   * @example const caller = await verifier.verify(token)
   */
  async verify (presented: string): Promise<Caller | undefined> {
    const keyHash = hashApiKey(presented)
    const known = this.#configured.get(keyHash) ?? this.#cached(keyHash)
    if (known !== undefined || this.#recentlyUnknown(keyHash)) return known
    return await this.#fromStore(keyHash)
  }

  #cached (keyHash: string): Caller | undefined {
    const verified = this.#verified.get(keyHash)
    return verified !== undefined && Date.now() - verified.at < CACHE_TTL_MS ? verified.caller : undefined
  }

  #recentlyUnknown (keyHash: string): boolean {
    const until = this.#unknown.get(keyHash)
    return until !== undefined && until > Date.now()
  }

  async #fromStore (keyHash: string): Promise<Caller | undefined> {
    const now = Date.now()
    const record = await this.#store.findApiKeyByHash(keyHash)
    const caller = record === undefined || record.revokedAt !== null ? undefined : { keyName: record.name, keyHash }
    this.#unknown.delete(keyHash)
    if (caller !== undefined) {
      this.#verified.set(keyHash, { caller, at: now })
      return caller
    }
    this.#verified.delete(keyHash)
    if (this.#unknown.size >= UNKNOWN_CACHE_SIZE) this.#unknown.delete(this.#unknown.keys().next().value!)
    this.#unknown.set(keyHash, now + CACHE_TTL_MS)
    return undefined
  }
}
