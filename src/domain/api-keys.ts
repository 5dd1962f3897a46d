/**
 * API keys. A key is never stored nor logged: only its SHA-256 is kept, and a
 * presented key is found by that hash. The lookup's timing can only tell of the
 * hash, never of the key, so no constant-time comparison is needed after it.
 * Each key has scopes, an optional expiry and rate limit; a name holds its current
 * key and, during a rotation's grace, the key it replaced.
 */
import { hash, randomInt } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { API_KEY_SCOPES, type ApiKeyScope } from '../schemas/scopes.js'
import type { ApiKeyRecord, Store } from '../store/store.js'

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

/** @example hashApiKey('ps_abc') // 64 hex characters */
export function hashApiKey (key: string): string {
  return hash('sha256', key)
}

// GitHub's token format (github.blog, 2021-04-05): a prefix naming product and kind, a
// random base62 body, and the CRC32 of the body in 6 base62 characters.
const KEY_PREFIX = 'petstore_api_'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
// 40 base62 characters: 238 bits.
const BODY_LENGTH = 40
const CHECKSUM_LENGTH = 6
const ISSUED_KEY = /^petstore_api_[0-9A-Za-z]{46}$/
// Keys issued before the prefix and checksum: `ps_` and 43 base64url characters.
const LEGACY_KEY = /^ps_[A-Za-z0-9_-]{43}$/

function checksumOf (body: string): string {
  let value = crc32(body)
  let text = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    text = BASE62[value % 62]! + text
    value = Math.floor(value / 62)
  }
  return text
}

/** A new random key: `petstore_api_`, 40 base62 characters and their CRC32 in 6 more. */
export function generateApiKey (): string {
  let body = ''
  for (let i = 0; i < BODY_LENGTH; i++) body += BASE62[randomInt(62)]
  return `${KEY_PREFIX}${body}${checksumOf(body)}`
}

/**
 * False for a key that claims our prefix but whose shape or checksum is wrong; true for
 * anything else (a good issued key, a legacy `ps_` key, a configured key).
 * @example hasValidChecksum(generateApiKey()) // true
 */
export function hasValidChecksum (key: string): boolean {
  if (!key.startsWith(KEY_PREFIX)) return true
  if (!ISSUED_KEY.test(key)) return false
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH)
  return key.endsWith(checksumOf(body))
}

/** A key of that name exists already: names are unique. */
export class ApiKeyNameTaken extends Error {
  override name = 'ApiKeyNameTaken'
}

/** No current key of that name is left to rotate (none, or revoked). */
export class NoApiKeyToRotate extends Error {
  override name = 'NoApiKeyToRotate'
}

/** When a key stops working: a fixed instant, or a number of seconds from issue (restarted by a rotation). */
export type ApiKeyLifetime = { expiresAt: Date } | { seconds: number } | undefined

export interface NewApiKey {
  name: string
  /** Both when not given. */
  scopes?: readonly ApiKeyScope[]
  lifetime?: ApiKeyLifetime
  /** Requests a minute replacing RATE_LIMIT (0: none); undefined follows RATE_LIMIT. */
  rateLimit?: number
}

/**
 * Issues a key, stores its hash under `name` and returns the key: the only time it is seen.
 * @throws ApiKeyNameTaken when a key has that name, even one issued a moment ago elsewhere
 * @example const key = await issueApiKey(store, { name: 'ci', scopes: ['pets:read'] })
 */
export async function issueApiKey (store: Store, { name, scopes = API_KEY_SCOPES, lifetime, rateLimit }: NewApiKey): Promise<string> {
  const key = generateApiKey()
  const seconds = lifetime !== undefined && 'seconds' in lifetime ? lifetime.seconds : null
  const expiresAt = lifetime === undefined ? null : 'expiresAt' in lifetime ? lifetime.expiresAt : new Date(Date.now() + lifetime.seconds * 1000)
  const record = await store.insertApiKey({ name, keyHash: hashApiKey(key), scopes: [...scopes], expiresAt, lifetimeSeconds: seconds, rateLimit: rateLimit ?? null })
  if (record === undefined) throw new ApiKeyNameTaken(`a key named ${name} exists already`)
  return key
}

/**
 * Issues the name's next key (same scopes and rate limit); the key it replaces keeps working
 * for `graceSeconds`, and a key still retiring from an earlier rotation ends now. A lifetime
 * in seconds restarts from now; a fixed expiry is kept.
 * @throws NoApiKeyToRotate when the name has no current key that is not revoked, or its fixed expiry has passed
 * @example const key = await rotateApiKey(store, 'ci', 24 * 3600)
 */
export async function rotateApiKey (store: Store, name: string, graceSeconds: number): Promise<string> {
  const key = generateApiKey()
  const at = new Date()
  const current = (await store.listApiKeys()).find((record) => record.name === name && record.retiresAt === null && record.revokedAt === null)
  // A fixed expiry is kept by a rotation: past it, the new key would be born expired.
  if (current?.lifetimeSeconds === null && current.expiresAt !== null && Date.parse(current.expiresAt) <= at.getTime()) {
    throw new NoApiKeyToRotate(`the key named ${name} expired at ${current.expiresAt}, an expiry a rotation keeps; create a key under a new name`)
  }
  const record = await store.rotateApiKey(name, {
    keyHash: hashApiKey(key),
    at,
    graceEndsAt: new Date(at.getTime() + graceSeconds * 1000),
    expiresAt: (replaced) => replaced.lifetimeSeconds !== null
      ? new Date(at.getTime() + replaced.lifetimeSeconds * 1000)
      : replaced.expiresAt === null ? null : new Date(replaced.expiresAt)
  })
  if (record === undefined) throw new NoApiKeyToRotate(`no key named ${name} to rotate (never issued, or revoked)`)
  return key
}

/** The state of a stored key at `now`, as `keys list` shows it. */
export type ApiKeyState = 'active' | 'retiring' | 'expired' | 'revoked'

/** @example stateOf(record, new Date()) // 'active' */
export function stateOf (record: ApiKeyRecord, now: Date): ApiKeyState {
  if (record.revokedAt !== null) return 'revoked'
  const ends = endOf(record)
  if (ends !== undefined && ends.at <= now.getTime()) return 'expired'
  return record.retiresAt === null ? 'active' : 'retiring'
}

/**
 * The expiry, in seconds since the epoch, of each name's current key that expires: what
 * an alert watches (retiring and revoked keys are left out, so a rotation's grace never pages).
 * @example expiryByName(await store.listApiKeys()) // Map { 'ci' => 1924992000 }
 */
export function expiryByName (records: readonly ApiKeyRecord[]): Map<string, number> {
  const expiries = new Map<string, number>()
  for (const record of records) {
    if (record.retiresAt === null && record.revokedAt === null && record.expiresAt !== null) {
      expiries.set(record.name, Date.parse(record.expiresAt) / 1000)
    }
  }
  return expiries
}

/** When a key stops working and why, the earlier of its expiry and its grace's end; undefined: never. */
function endOf (record: ApiKeyRecord): { at: number, kind: 'expired' | 'replaced' } | undefined {
  const expires = record.expiresAt === null ? Infinity : Date.parse(record.expiresAt)
  const retires = record.retiresAt === null ? Infinity : Date.parse(record.retiresAt)
  if (expires === Infinity && retires === Infinity) return undefined
  return expires <= retires ? { at: expires, kind: 'expired' } : { at: retires, kind: 'replaced' }
}

const CACHE_TTL_MS = 5_000
// As long as a throttle window (src/domain/failed-authentications.ts): a key in use is never refused
// for its address's failures; revocation still bites within CACHE_TTL_MS, by verify.
const KNOWN_VALID_MS = 60_000
// A few thousand hashes: a flood of forged keys is remembered without growing the memory.
const UNKNOWN_CACHE_SIZE = 4_096
// lastUsedAt is written at first sight, then at most this often per key and instance.
const LAST_USE_EVERY_MS = 60_000
// First sights within this time go to the store in one batch.
const LAST_USE_BATCH_MS = 1_000

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
    return text.startsWith(KEY_PREFIX) || LEGACY_KEY.test(text) || this.#configured.has(hashApiKey(text))
  }

  /**
   * True, from memory alone, for a configured key or one the store found working within
   * the last minute: such a key passes the throttle of forged keys.
   * @example if (!verifier.isKnownValid(token)) await refuseIfThrottled(request)
   */
  isKnownValid (presented: string): boolean {
    const keyHash = hashApiKey(presented)
    if (this.#configured.has(keyHash)) return true
    const known = this.#verified.get(keyHash)
    const now = Date.now()
    return known !== undefined && now - known.at < KNOWN_VALID_MS && (known.end === undefined || now < known.end.at)
  }

  /**
   * The caller, or why the key is refused.
   * @example const verdict = await verifier.verify(token); if (verdict.kind === 'valid') use(verdict.caller)
   */
  async verify (presented: string): Promise<Verdict> {
    const keyHash = hashApiKey(presented)
    const configured = this.#configured.get(keyHash)
    if (configured !== undefined) return configured
    const now = Date.now()
    const known = this.#verified.get(keyHash)
    if (known !== undefined && now - known.at < CACHE_TTL_MS) return this.#judge(keyHash, known, now)
    // After the cache: a key the store knows has a good checksum, and pays nothing for it.
    if (!hasValidChecksum(presented)) return { kind: 'bad_checksum' }
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

/**
 * The last use of each store key, written at first sight (batched within a second), then at
 * most once a minute per key, and the latest of each at close: never a write per request.
 */
class LastUses {
  readonly #uses = new Map<string, { latest: number, written: number }>()
  readonly #pending = new Map<string, number>()
  readonly #store: Store
  readonly #onError: (err: unknown) => void
  #timer: NodeJS.Timeout | undefined
  #writing: Promise<void> = Promise.resolve()

  constructor (store: Store, onError: (err: unknown) => void) {
    this.#store = store
    this.#onError = onError
  }

  note (keyHash: string, now: number): void {
    const use = this.#uses.get(keyHash)
    if (use !== undefined) {
      use.latest = now
      if (now - use.written < LAST_USE_EVERY_MS) return
      use.written = now
    } else {
      this.#uses.set(keyHash, { latest: now, written: now })
    }
    this.#pending.set(keyHash, now)
    this.#timer ??= setTimeout(() => { void this.#flush() }, LAST_USE_BATCH_MS).unref()
  }

  async close (): Promise<void> {
    clearTimeout(this.#timer)
    for (const [keyHash, use] of this.#uses) {
      if (use.latest > use.written) this.#pending.set(keyHash, use.latest)
    }
    await this.#flush()
  }

  async #flush (): Promise<void> {
    this.#timer = undefined
    const batch = [...this.#pending].map(([keyHash, at]) => ({ keyHash, at: new Date(at) }))
    this.#pending.clear()
    if (batch.length === 0) return await this.#writing
    // One write at a time: a batch never races the one before it.
    this.#writing = this.#writing.then(async () => {
      await this.#store.recordApiKeyUses(batch)
    }).catch(this.#onError)
    await this.#writing
  }
}
