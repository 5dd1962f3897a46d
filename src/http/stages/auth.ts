/**
 * Bearer API keys (RFC 6750) on everything under /v1 but the OpenAPI document,
 * unknown routes and methods included.
 */
import type { FastifyRequest, onRequestAsyncHookHandler, onRequestHookHandler } from 'fastify'
import { PresentedKey, type ApiKeyVerifier, type Verdict } from '../../domain/api-keys/verifier.js'
import { HttpError } from '../errors.js'
import { MESSAGES } from '../../schemas/messages.js'
import type { ApiKeyScope } from '../../schemas/scopes.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs for the route (src/schemas/scopes.ts); none: any key. */
    scope?: ApiKeyScope
  }
}

const KEYLESS_PATHS = new Set(['/v1/openapi.json', '/v1/openapi.yaml'])
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
    const path = request.state.route.url ?? routerPathOf(request.url)
    request.state.keyRequired = (path === '/v1' || path.startsWith('/v1/')) && !KEYLESS_PATHS.has(path)
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
 */
function bearerTokenOf (request: FastifyRequest): string | undefined {
  const sent = request.raw.headersDistinct.authorization
  return sent?.length === 1 ? BEARER.exec(sent[0]!)?.[1] : undefined
}

/**
 * 401 unless the request sends one `Authorization: Bearer <token>`, its syntax alone (the
 * checksum is the verifier's): a caller without a key learns nothing else, and waits for no
 * lookup. The token is kept for the stages that look it up.
 * @example app.addHook('onRequest', requireBearer)
 */
export const requireBearer: onRequestHookHandler = (request, _reply, done) => {
  if (!requiresKey(request)) return done()
  const token = bearerTokenOf(request)
  if (token === undefined) {
    throw new HttpError('unauthorized', 'Authorization: send the API key once, as Authorization: Bearer <key>',
      { 'www-authenticate': 'Bearer realm="petstore"' })
  }
  request.state.presented = new PresentedKey(token)
  done()
}

/** Why a key was refused, in words its holder can act on: each had a valid key once, or mistyped one. */
function refusalOf (verdict: Exclude<Verdict, { kind: 'valid' }>): string {
  switch (verdict.kind) {
    case 'unknown': return MESSAGES.unknownKey
    case 'bad_checksum': return 'Authorization: the API key is malformed (its checksum does not match); copy it again, whole'
    case 'expired': return `Authorization: the API key expired at ${verdict.at.toISOString()}; ask for a new one`
    case 'replaced': return `Authorization: the API key was replaced by a rotation, and its grace ended at ${verdict.at.toISOString()}; use the new key`
  }
}

/**
 * The auth hook: 401 unless the bearer key requireBearer kept is valid; a refused key
 * (unknown, revoked, malformed, expired, replaced) is reported to `onFailure` first. What the
 * router refuses meets it too (src/http/plugins/unrouted.ts), so a bad URL is a 401 first too.
 * @example app.addHook('onRequest', authenticate(verifier, throttle.noteFailure))
 */
export function authenticate (verifier: ApiKeyVerifier, onFailure: (request: FastifyRequest) => Promise<void>): onRequestAsyncHookHandler {
  return async (request) => {
    const presented = request.state.presented
    if (presented === undefined) return
    const verdict = await verifier.verify(presented)
    if (verdict.kind === 'valid') {
      request.state.caller = verdict.caller
      return
    }
    await onFailure(request)
    throw new HttpError('unauthorized', refusalOf(verdict), { 'www-authenticate': 'Bearer realm="petstore", error="invalid_token"' })
  }
}

/**
 * 403 when the caller's key lacks the route's scope (RFC 6750 §3.1). Unknown routes and other
 * methods have no scope: their 404 and 405 stay.
 * @example app.addHook('onRequest', requireScope)
 */
export const requireScope: onRequestHookHandler = (request, _reply, done) => {
  const config = request.state.route.config
  const scope = config.scope
  const caller = request.state.caller
  if (scope === undefined || caller === undefined || caller.scopes.has(scope)) return done()
  throw new HttpError('insufficient_scope', MESSAGES.insufficientScope(scope, config.operation ?? 'this operation'),
    { 'www-authenticate': `Bearer realm="petstore", error="insufficient_scope", scope="${scope}"` })
}
