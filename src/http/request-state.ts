/**
 * What the hooks learn of a request, on one typed decoration: whether it needs a
 * key, who called, and the Idempotency-Key it holds.
 */
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify'
import type { Caller } from '../domain/api-keys/verifier.js'
import fp from 'fastify-plugin'

export interface RequestState {
  /** Whether the path needs a key; worked out once, by the first hook that asks. */
  keyRequired?: boolean
  /** The authenticated caller; set on every request under /v1 that passed auth. */
  caller?: Caller
  /** The Idempotency-Key of a createPet request while it is held, and how to free it. */
  idempotency?: { key: string, release: () => void }
}

declare module 'fastify' {
  interface FastifyRequest {
    state: RequestState
  }
}

/**
 * The first hook of every request: a fresh state (an object decoration is shared by every request).
 * @example app.addHook('onRequest', startRequestState)
 */
export const startRequestState: onRequestAsyncHookHandler = async (request) => {
  request.state = {}
}

/** @example decorateRequestState(app) // before the hooks that read it */
async function requestStatePlugin (app: FastifyInstance): Promise<void> {
  app.decorateRequest('state')
}

/** @example await app.register(requestState) */
export const requestState = fp(requestStatePlugin, { name: 'petstore-request-state' })
