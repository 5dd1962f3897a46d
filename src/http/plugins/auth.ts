/**
 * Bearer API keys (RFC 6750) on everything under /v1 but the OpenAPI document,
 * unknown routes and methods included.
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { ApiKeyVerifier } from '../../domain/api-keys.js'
import { HttpError } from '../errors.js'

const PUBLIC = new Set(['/v1/openapi.json', '/v1/openapi.yaml'])
// The scheme is case-insensitive (RFC 9110 §11.1). The token is what PETSTORE_API_KEYS
// takes, printable ASCII without spaces: RFC 6750's b64token and the keys it would refuse.
const BEARER = /^bearer +([\x21-\x7e]+) *$/i

const ABSOLUTE_FORM_ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*/
const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g

/**
 * Decided on the path the router reads, not on the raw request target: a matched route's
 * own pattern, else the target's path without an absolute-form origin, percent-decoded,
 * so that neither `/%761/pets` nor `http://host/v1/pets` is a way around the key.
 * @example if (requiresKey(request)) reply.header('cache-control', 'no-store')
 */
export function requiresKey (request: FastifyRequest): boolean {
  if (request.state.keyRequired === undefined) {
    const path = request.routeOptions.url ?? routerPathOf(request.url)
    request.state.keyRequired = (path === '/v1' || path.startsWith('/v1/')) && !PUBLIC.has(path)
  }
  return request.state.keyRequired
}

/** @example routerPathOf('http://x/%761/pets?limit=1') // '/v1/pets' */
function routerPathOf (target: string): string {
  const path = target.replace(ABSOLUTE_FORM_ORIGIN, '').split('?', 1)[0]!
  return path.includes('%') ? path.replace(PERCENT_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : path
}

/**
 * The bearer key of the request, or undefined when Authorization is missing, malformed
 * or sent twice (two are malformed credentials, even when one of them is right).
 * @example const token = bearerTokenOf(request)
 */
export function bearerTokenOf (request: FastifyRequest): string | undefined {
  const sent = request.raw.headersDistinct.authorization
  return sent?.length === 1 ? BEARER.exec(sent[0]!)?.[1] : undefined
}

/**
 * The auth hook: 401 unless the request carries one valid bearer key; an unknown or
 * revoked key is reported to `onFailure` first. Also run for what the router refuses
 * (src/http/protocol-errors.ts), so a bad URL is a 401 first too.
 * @example app.addHook('onRequest', authenticate(verifier, throttle.noteFailure))
 */
export function authenticate (verifier: ApiKeyVerifier, onFailure: (request: FastifyRequest) => Promise<void>): onRequestAsyncHookHandler {
  // 401 before validation: a caller without a key learns nothing of our rules (RFC 6750 §3).
  return async (request) => {
    if (!requiresKey(request)) return
    const token = bearerTokenOf(request)
    if (token === undefined) {
      throw new HttpError('unauthorized', 'Authorization: send the API key once, as Authorization: Bearer <key>',
        { 'www-authenticate': 'Bearer realm="petstore"' })
    }
    request.state.caller = await verifier.verify(token)
    if (request.state.caller === undefined) {
      await onFailure(request)
      throw new HttpError('unauthorized', 'Authorization: the API key is unknown or revoked',
        { 'www-authenticate': 'Bearer realm="petstore", error="invalid_token"' })
    }
  }
}
