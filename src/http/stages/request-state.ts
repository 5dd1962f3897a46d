/**
 * What the stages learn of a request, on one typed decoration: its route, whether it needs a
 * key, who called, and the Idempotency-Key it holds.
 */
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Caller, PresentedKey } from '../../domain/api-keys/verifier.js'
import type { RefusalReason } from './admission.js'

export interface RequestState {
  /** The route's options, read once: Fastify builds `request.routeOptions` anew on every read. */
  readonly route: FastifyRequest['routeOptions']
  /** Whether the path needs a key; worked out once, by the first stage that asks. */
  keyRequired?: boolean
  /** The bearer key a request behind a key sent, read once (src/http/stages/auth.ts requireBearer). */
  presented?: PresentedKey
  /** The authenticated caller; set on every request under /v1 that passed auth. */
  caller?: Caller
  /** Why the request was refused for load, when it was (src/http/stages/admission.ts). */
  refused?: RefusalReason
  /** The Idempotency-Key of a createPet request while it is held, and how to free it. */
  idempotency?: { key: string, release: () => void }
}

declare module 'fastify' {
  interface FastifyRequest {
    state: RequestState
  }
}

/**
 * A fresh state for each request: a decoration's object value would be shared by every request.
 * @example app.decorateRequest('state'); app.addHook('onRequest', startRequestState)
 */
export const startRequestState: onRequestHookHandler = (request, _reply, done) => {
  request.state = { route: request.routeOptions }
  done()
}
