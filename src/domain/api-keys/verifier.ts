/** Who a presented API key stands for: the verifier and its caches. */
import { hash } from 'node:crypto'
import { API_KEY_SCOPES, type ApiKeyScope } from '../../schemas/scopes.js'
import type { Store } from '../../store/store.js'
import { hasIssuedShape, hasValidChecksum, hashApiKey } from './format.js'
import { LastUses } from './last-use.js'
import { endOf } from './lifecycle.js'

/** Who called: the key's name (metrics, rate limit, idempotency), what it may do, and its own limit. */
export interface Caller {
  keyName: string
  /** SHA-256 of the name, hex: scopes idempotency keys, the same across a rotation. */
  nameHash: string
  scopes: ReadonlySet<ApiKeyScope>
  /** Requests a minute replacing RATE_LIMIT (0: none); undefined follows RATE_LIMIT. */
  rateLimit: number | undefined
}

/** What a presented key is worth: a caller, or why it is refused. */
export type Verdict =
  | { kind: 'valid', caller: Caller }
  /** Unknown, or revoked. */
  | { kind: 'unknown' }
  /** Of the issued shape, but its checksum is wrong: mistyped or forged; no store was asked. */
  | { kind: 'bad_checksum' }
  | { kind: 'expired', at: Date }
  /** Rotated out: its grace ended at `at`. */
  | { kind: 'replaced', at: Date }

const CACHE_TTL_MS = 5_000
// As long as a throttle window (src/domain/failed-authentications.ts): a key in use is never refused
// for its address's failures; revocation still bites within CACHE_TTL_MS, by verify.
const KNOWN_VALID_MS = 60_000
// A few thousand hashes: a flood of forged keys is remembered without growing the memory.
const UNKNOWN_CACHE_SIZE = 4_096

/** A key the store found, as cached: its caller and when it stops working (checked at each request). */
interface KnownKey {
  /** The verdict while the key works, made once: a request allocates nothing. */
  valid: Verdict & { kind: 'valid' }
  end: { at: number, kind: 'expired' | 'replaced' } | undefined
  /** When the store was asked. */
  at: number
}

/** The keys of the environment: `PETSTORE_API_KEYS` (both scopes), `PETSTORE_READ_ONLY_KEYS` (pets:read). */
export interface ConfiguredKeys {
  readWrite: readonly string[]
  readOnly: readonly string[]
}

/**
 * A key as a request presented it: the throttle and the verifier both look it up by its hash,
 * computed at the first look, so once a request.
 * @example const presented = new PresentedKey(token); verifier.isKnownValid(presented); await verifier.verify(presented)
 */
export class PresentedKey {
  #hash: string | undefined
  constructor (readonly text: string) {}
  get hash (): string {
    this.#hash ??= hashApiKey(this.text)
    return this.#hash
  }
}

function validAs (keyName: string, scopes: readonly ApiKeyScope[], rateLimit: number | null): Verdict & { kind: 'valid' } {
  return { kind: 'valid', caller: { keyName, nameHash: hash('sha256', keyName), scopes: new Set(scopes), rateLimit: rateLimit ?? undefined } }
}

/**
 * Checks presented keys against the keys of the environment and the keys of the store.
 * Store answers are cached for 5 s, known keys and unknown ones alike, so a rotation or
 * revocation takes effect within 5 s on every instance and a forged key sent again does not
 * reach the store again; an expiry or a grace's end is compared at each request, to the second.
 * Records each store key's last use (LastUses).
 */
export class ApiKeyVerifier {
  readonly #configured = new Map<string, Verdict & { kind: 'valid' }>()
  readonly #verified = new Map<string, KnownKey>()
  // Oldest first (a Map keeps insertion order), so the first entry is the one to drop.
  readonly #unknown = new Map<string, number>()
  readonly #store: Store
  readonly #uses: LastUses

  /** @example new ApiKeyVerifier(store, { readWrite: config.apiKeys, readOnly: config.readOnlyApiKeys }, (err) => log.warn(err)) */
  constructor (store: Store, configured: ConfiguredKeys, onUseWriteError: (err: unknown) => void) {
    this.#store = store
    this.#uses = new LastUses(store, onUseWriteError)
    configured.readWrite.forEach((key, index) => this.#configured.set(hashApiKey(key), validAs(`env-${index + 1}`, API_KEY_SCOPES, null)))
    configured.readOnly.forEach((key, index) => this.#configured.set(hashApiKey(key), validAs(`env-read-${index + 1}`, ['pets:read'], null)))
  }

  /**
   * True when `text` is a configured key or has the shape of an issued one (either format);
   * synchronous, so it can screen what is about to be logged.
   * @example verifier.mightBeApiKey('ps_' + 'a'.repeat(43)) // true
   */
  mightBeApiKey (text: string): boolean {
    return hasIssuedShape(text) || this.#configured.has(hashApiKey(text))
  }

  /**
   * True, from memory alone, for a configured key or one the store found working within
   * the last minute: such a key passes the throttle of forged keys.
   * @example if (verifier.isKnownValid(presented)) return // not counted against its address (src/http/stages/forged-key-throttle.ts)
   */
  isKnownValid (presented: PresentedKey): boolean {
    const keyHash = presented.hash
    if (this.#configured.has(keyHash)) return true
    const known = this.#verified.get(keyHash)
    const now = Date.now()
    return known !== undefined && now - known.at < KNOWN_VALID_MS && (known.end === undefined || now < known.end.at)
  }

  /**
   * The caller, or why the key is refused.
   * @example const verdict = await verifier.verify(presented); if (verdict.kind === 'valid') use(verdict.caller)
   */
  async verify (presented: PresentedKey): Promise<Verdict> {
    const keyHash = presented.hash
    const configured = this.#configured.get(keyHash)
    if (configured !== undefined) return configured
    const now = Date.now()
    const known = this.#verified.get(keyHash)
    if (known !== undefined && now - known.at < CACHE_TTL_MS) return this.#judge(keyHash, known, now)
    // After the cache: a key the store knows has a good checksum, and pays nothing for it.
    if (!hasValidChecksum(presented.text)) return { kind: 'bad_checksum' }
    const until = this.#unknown.get(keyHash)
    if (until !== undefined && until > now) return { kind: 'unknown' }
    return await this.#fromStore(keyHash)
  }

  /** Writes the last uses not yet written; called when the app closes. */
  async close (): Promise<void> {
    await this.#uses.close()
  }

  #judge (keyHash: string, known: KnownKey, now: number): Verdict {
    if (known.end !== undefined && now >= known.end.at) return { kind: known.end.kind, at: new Date(known.end.at) }
    this.#uses.note(keyHash, now)
    return known.valid
  }

  async #fromStore (keyHash: string): Promise<Verdict> {
    const now = Date.now()
    const record = await this.#store.findApiKeyByHash(keyHash)
    this.#unknown.delete(keyHash)
    if (record !== undefined && record.revokedAt === null) {
      const known = { valid: validAs(record.name, record.scopes, record.rateLimit), end: endOf(record), at: now }
      this.#verified.set(keyHash, known)
      return this.#judge(keyHash, known, Date.now())
    }
    this.#verified.delete(keyHash)
    if (this.#unknown.size >= UNKNOWN_CACHE_SIZE) this.#unknown.delete(this.#unknown.keys().next().value!)
    this.#unknown.set(keyHash, now + CACHE_TTL_MS)
    return { kind: 'unknown' }
  }
}
