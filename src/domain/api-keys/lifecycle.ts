/**
 * The life of an API key: issued with scopes, an optional expiry and rate limit; a name holds
 * its current key and, during a rotation's grace, the key it replaced; revoked at last.
 */
import { API_KEY_SCOPES, type ApiKeyScope } from '../../schemas/scopes.js'
import type { ApiKeyRecord, Store } from '../../store/store.js'
import { generateApiKey, hashApiKey } from './format.js'

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
  const createdAt = new Date()
  const seconds = lifetime !== undefined && 'seconds' in lifetime ? lifetime.seconds : null
  const expiresAt = lifetime === undefined ? null : 'expiresAt' in lifetime ? lifetime.expiresAt : new Date(createdAt.getTime() + lifetime.seconds * 1000)
  const record = await store.insertApiKey({ name, keyHash: hashApiKey(key), scopes: [...scopes], createdAt, expiresAt, lifetimeSeconds: seconds, rateLimit: rateLimit ?? null })
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
  // The store refuses to replace a key that is no longer current: another rotation went first, so read again.
  for (;;) {
    const at = new Date()
    const current = (await store.listApiKeys()).find((record) => record.name === name && record.retiresAt === null && record.revokedAt === null)
    if (current === undefined) throw new NoApiKeyToRotate(`no key named ${name} to rotate (never issued, or revoked)`)
    const { lifetimeSeconds, expiresAt } = current
    // A fixed expiry is kept by a rotation: past it, the new key would be born expired.
    if (lifetimeSeconds === null && expiresAt !== null && expiresAt <= at) {
      throw new NoApiKeyToRotate(`the key named ${name} expired at ${expiresAt.toISOString()}, an expiry a rotation keeps; create a key under a new name`)
    }
    const rotated = await store.rotateApiKey({
      replacedId: current.id,
      graceEndsAt: new Date(at.getTime() + graceSeconds * 1000),
      // The same scopes, rate limit and kind of lifetime.
      key: { ...current, keyHash: hashApiKey(key), createdAt: at, expiresAt: lifetimeSeconds === null ? expiresAt : new Date(at.getTime() + lifetimeSeconds * 1000) }
    })
    if (rotated !== undefined) return key
  }
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
      expiries.set(record.name, record.expiresAt.getTime() / 1000)
    }
  }
  return expiries
}

/**
 * When a key stops working and why, the earlier of its expiry and its grace's end; undefined: never.
 * @example endOf(record) // { at: 1924992000000, kind: 'expired' }
 */
export function endOf (record: ApiKeyRecord): { at: number, kind: 'expired' | 'replaced' } | undefined {
  const expires = record.expiresAt?.getTime() ?? Infinity
  const retires = record.retiresAt?.getTime() ?? Infinity
  if (expires === Infinity && retires === Infinity) return undefined
  return expires <= retires ? { at: expires, kind: 'expired' } : { at: retires, kind: 'replaced' }
}
