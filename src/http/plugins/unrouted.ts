/**
 * The catch-all: a request no route takes meets every stage a routed one meets (Fastify runs the
 * app's hooks before a not-found handler's own), then is answered here, before any body is read,
 * so whatever a body holds changes nothing: 400 for a target the router cannot read, 405 with
 * `Allow` (RFC 9110 §15.5.6) on a known path whatever the method (PROPFIND too), else 404.
 */
import FindMyWay from 'find-my-way'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { MESSAGES } from '../../schemas/messages.js'
import { HttpError } from '../errors.js'
import { isUnreadableTarget } from '../routable-url.js'

interface KnownPath { url: string, methods: Set<string> }

async function unroutedPlugin (app: FastifyInstance, { maxParamLength }: { maxParamLength: number }): Promise<void> {
  // Every path routed from here on (the API's and those around it), matched as the app's router matches.
  const knownPaths = FindMyWay({ maxParamLength })
  app.addHook('onRoute', (route) => {
    const urls = [route.url]
    // A plugin's own root ('/' under the prefix '/docs') is routed as '/docs' and as '/docs/',
    // and only the first is announced to this hook.
    if (route.routePath === '' && route.prefixTrailingSlash !== 'no-slash') urls.push(`${route.url}/`)
    for (const url of urls) {
      let known = knownPaths.findRoute('GET', url)?.store as KnownPath | undefined
      if (known === undefined) {
        known = { url, methods: new Set() }
        knownPaths.on('GET', url, () => {}, known)
      }
      for (const method of [route.method].flat()) known.methods.add(method)
    }
  })

  const notFound = (request: FastifyRequest): HttpError =>
    new HttpError('not_found', `${request.method} ${pathOf(request.originalUrl)}: no such route; see /v1/openapi.json`)
  // Fastify runs a not-found handler's own hooks of every lifecycle stage (its types list only preValidation and preHandler).
  const refuse: onRequestHookHandler = (request, _reply, done) => {
    if (isUnreadableTarget(request.originalUrl)) return done(new HttpError('validation_failed', 'path: is not a valid URL'))
    const known = knownPaths.find('GET', request.url)?.store as KnownPath | undefined
    if (known === undefined) return done(notFound(request))
    const allow = [...known.methods].sort().join(', ')
    done(new HttpError('method_not_allowed', MESSAGES.methodNotAllowed(request.method, known.url, allow), { allow }))
  }
  // The handler answers only a route's own "not found" (reply.callNotFound(): a file the docs page lacks).
  app.setNotFoundHandler({ onRequest: refuse } as NotFoundOptions, async (request) => { throw notFound(request) })
}

/** @example await app.register(unroutedAnswers, { maxParamLength: HEADER_LIMIT_BYTES }) // before the routes */
export const unroutedAnswers = fp<{ maxParamLength: number }>(unroutedPlugin, { name: 'petstore-unrouted' })

type NotFoundOptions = Parameters<FastifyInstance['setNotFoundHandler']>[0] & { onRequest?: onRequestHookHandler }

function pathOf (url: string): string {
  const path = url.split('?')[0] ?? ''
  return path.length > 100 ? `${path.slice(0, 100)}…` : path
}
