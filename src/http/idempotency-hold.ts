/**
 * The hold of a create's Idempotency-Key: from the moment its headers arrive until its answer is
 * sent, so a retry while the first is still uploading its body or committing gets 409
 * (src/domain/pets.ts holdIdempotencyKey).
 */
import type { onRequestHookHandler, onSendHookHandler } from 'fastify'
import type { PetCatalogue } from '../domain/pets.js'
import { IDEMPOTENCY_KEY_MAX } from '../schemas/operations.js'
import { HttpError } from './errors.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an Idempotency-Key (createPet). */
    idempotent?: true
  }
}

function idempotencyKeyOf (header: string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  // The draft sends the key as a quoted structured-field string; a bare token is taken as it is.
  const key = header.length === 1 ? header[0]!.replace(/^"(.*)"$/, '$1') : ''
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX) {
    throw new HttpError('validation_failed', `Idempotency-Key: must be sent once, 1 to ${IDEMPOTENCY_KEY_MAX} characters`)
  }
  return key
}

/**
 * Holds the key of an authenticated create, until the response is sent or the client leaves.
 * @example app.addHook('onRequest', holdIdempotencyKey(catalogue)); app.addHook('onSend', releaseIdempotencyKey)
 */
export function holdIdempotencyKey (catalogue: PetCatalogue): onRequestHookHandler {
  return (request, reply, done) => {
    if (request.state.route.config.idempotent !== true) return done()
    const key = idempotencyKeyOf(request.raw.headersDistinct['idempotency-key'])
    const caller = request.state.caller
    if (key === undefined || caller === undefined) return done()
    const release = catalogue.holdIdempotencyKey(caller, key)
    request.state.idempotency = { key, release }
    reply.raw.once('close', release) // the client went away, or the response is done
    done()
  }
}

/** Frees the key as its answer goes out: a retry from then on replays it. */
export const releaseIdempotencyKey: onSendHookHandler = (request, _reply, payload, done) => {
  request.state.idempotency?.release()
  done(null, payload)
}
