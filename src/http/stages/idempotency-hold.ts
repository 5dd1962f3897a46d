/**
 * The hold of a create's Idempotency-Key: from the moment its headers arrive until its answer is
 * sent, so a retry while the first is still uploading its body or committing gets 409
 * (src/domain/pets.ts holdIdempotencyKey).
 */
import type { onRequestHookHandler, onRouteHookHandler, onSendHookHandler } from 'fastify'
import type { PetCatalogue } from '../../domain/pets.js'
import { IDEMPOTENCY_KEY_MAX } from '../../schemas/operations.js'
import { HttpError } from '../errors.js'

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
 * The hold on the routes marked `idempotent` alone, as their own hooks (after every stage of the
 * app's): from the headers of an authenticated create until its answer is sent or the client
 * leaves, then a retry replays it. Other routes meet no hook of it.
 * @example app.addHook('onRoute', holdIdempotencyKeys(catalogue))
 */
export function holdIdempotencyKeys (catalogue: PetCatalogue): onRouteHookHandler {
  const hold: onRequestHookHandler = (request, reply, done) => {
    const key = idempotencyKeyOf(request.raw.headersDistinct['idempotency-key'])
    const caller = request.state.caller
    if (key === undefined || caller === undefined) return done()
    const release = catalogue.holdIdempotencyKey(caller, key)
    request.state.idempotency = { key, release }
    reply.raw.once('close', release) // the client went away, or the response is done
    done()
  }
  const release: onSendHookHandler = (request, _reply, payload, done) => {
    request.state.idempotency?.release()
    done(null, payload)
  }
  return (route) => {
    if (route.config?.idempotent !== true) return
    route.onRequest = [...[route.onRequest ?? []].flat(), hold]
    route.onSend = [release, ...[route.onSend ?? []].flat()]
  }
}
