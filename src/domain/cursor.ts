/**
 * Opaque paging cursors: the last id of a page and the status filter it was made
 * for, signed with the database's secret so that any instance accepts it and an
 * altered one is refused.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'
import { parseInt64, type Int64 } from '../schemas/int64.js'
import type { PetStatus } from '../schemas/pets.js'
import { InvalidCursor } from './errors.js'

export interface CursorPosition {
  afterId: Int64
  status: PetStatus | undefined
}

const SIGNATURE_BYTES = 16

export class CursorCodec {
  // A KeyObject is checked once: a Buffer key would be copied and checked on every signature.
  readonly #secret: KeyObject

  constructor (secret: Buffer) {
    this.#secret = createSecretKey(secret)
  }

  /** @example codec.encode(20, 'sold') // 'MjA6c29sZA.…' */
  encode (afterId: Int64, status: PetStatus | undefined): string {
    const payload = `${afterId}:${status ?? ''}`
    return `${Buffer.from(payload, 'latin1').toString('base64url')}.${this.#sign(payload).toString('base64url')}`
  }

  /** @throws InvalidCursor for a cursor that is malformed, altered, or made for another status filter */
  decode (cursor: string, status: PetStatus | undefined): CursorPosition {
    const invalid = new InvalidCursor('altered')
    const [payloadText, signatureText, extra] = cursor.split('.')
    if (payloadText === undefined || signatureText === undefined || extra !== undefined) throw invalid
    const payload = Buffer.from(payloadText, 'base64url')
    const signature = Buffer.from(signatureText, 'base64url')
    // Node's decoder skips padding, stray characters and unused low bits: only the one spelling encode() makes is the cursor.
    if (payload.toString('base64url') !== payloadText || signature.toString('base64url') !== signatureText) throw invalid
    if (signature.length !== SIGNATURE_BYTES || !timingSafeEqual(signature, this.#sign(payload))) throw invalid
    const match = /^([0-9]{1,19}):([a-z]*)$/.exec(payload.toString())
    if (match === null) throw invalid
    if ((match[2] || undefined) !== status) {
      throw new InvalidCursor('other-status')
    }
    return { afterId: parseInt64(match[1]!), status }
  }

  /** The payload is ASCII: as a string or as its bytes, the same signature. */
  #sign (payload: string | Buffer): Buffer {
    return createHmac('sha256', this.#secret).update(payload).digest().subarray(0, SIGNATURE_BYTES)
  }
}
