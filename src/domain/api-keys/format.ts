/**
 * The API key format. A key is never stored nor logged: only its SHA-256 is kept, and a
 * presented key is found by that hash. The lookup's timing can only tell of the hash, never
 * of the key, so no constant-time comparison is needed after it.
 */
import { hash, randomInt } from 'node:crypto'
import { crc32 } from 'node:zlib'

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

/**
 * True when `text` claims our prefix or has the shape of a legacy key.
 * @example hasIssuedShape('ps_' + 'a'.repeat(43)) // true
 */
export function hasIssuedShape (text: string): boolean {
  return text.startsWith(KEY_PREFIX) || LEGACY_KEY.test(text)
}
