/**
 * Every known path answers the methods it does not take with 405 `method_not_allowed`
 * and `Allow` (RFC 9110 §15.5.6): the API's paths, and those around it (health, metrics,
 * the OpenAPI document, the docs page and its assets).
 */
import { METHODS } from 'node:http'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { HttpError } from '../errors.js'

/**
 * Records the methods of every route registered from now on. The function it returns, called
 * once every route is registered, adds a route for each recorded path that answers every other
 * method with 405 and `Allow` listing the recorded ones.
 * @example const answerOtherMethods = recordRouteMethods(app); registerPetRoutes(app, options); answerOtherMethods()
 */
export function recordRouteMethods (app: FastifyInstance): () => void {
  // Fastify routes only the common methods; Node parses more (PROPFIND, LOCK, …), so all are
  // added, but CONNECT, which never reaches a route (src/app.ts answers it).
  for (const method of METHODS) {
    if (method !== 'CONNECT' && method !== 'POST') app.addHttpMethod(method, { overrideExisting: true })
  }
  const methodsByUrl = new Map<string, Set<string>>()
  let recording = true
  app.addHook('onRoute', (route) => {
    if (!recording) return
    const urls = [route.url]
    // A plugin's own root ('/' under the prefix '/docs') is routed as '/docs' and as '/docs/',
    // and only the first is announced to this hook.
    if (route.routePath === '' && route.prefixTrailingSlash !== 'no-slash') urls.push(`${route.url}/`)
    for (const url of urls) {
      const methods = methodsByUrl.get(url) ?? new Set<string>()
      for (const method of ([] as string[]).concat(route.method)) methods.add(method)
      methodsByUrl.set(url, methods)
    }
  })
  return () => {
    recording = false
    for (const [url, methods] of methodsByUrl) {
      const allow = [...methods].sort().join(', ')
      const refuse = (request: FastifyRequest): HttpError =>
        new HttpError('method_not_allowed', `${request.method}: is not allowed on ${request.routeOptions.url}; use ${allow}`, { allow })
      app.route({
        method: app.supportedMethods.filter((method) => !methods.has(method)),
        url,
        exposeHeadRoute: false,
        schema: { hide: true },
        config: { operation: 'methodNotAllowed' },
        // Answered before any body is read (after the app's hooks: auth first under /v1), so a
        // malformed, mistyped or oversized body changes nothing.
        onRequest: (request, _reply, done) => { done(refuse(request)) },
        handler: async (request) => { throw refuse(request) }
      })
    }
  }
}
