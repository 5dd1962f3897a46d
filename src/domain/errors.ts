/**
 * The domain's own errors: what the catalogue's rules refuse, in the domain's words, with no
 * status, header or wire field name. src/http/errors.ts alone maps each to an answer.
 */
import type { Int64 } from '../schemas/int64.js'

/** No animal has the id asked for. */
export class PetNotFound extends Error {
  override name = 'PetNotFound'

  /** @example throw new PetNotFound(42) */
  constructor (readonly id: Int64) {
    super(`no animal with id ${id}`)
  }
}

/** A create with this idempotency key is still being answered. */
export class IdempotencyKeyInFlight extends Error {
  override name = 'IdempotencyKeyInFlight'

  constructor () {
    super('a request with this idempotency key is still in progress')
  }
}

/** The idempotency key was first used for another animal. */
export class IdempotencyKeyReused extends Error {
  override name = 'IdempotencyKeyReused'

  constructor () {
    super('the idempotency key was used with a different animal')
  }
}

/** A paging cursor this service did not make (`altered`), or made for another status filter. */
export class InvalidCursor extends Error {
  override name = 'InvalidCursor'

  /** @example throw new InvalidCursor('other-status') */
  constructor (readonly reason: 'altered' | 'other-status') {
    super(reason === 'altered' ? 'the cursor was not made by this service, or was altered' : 'the cursor was made for another status filter')
  }
}
