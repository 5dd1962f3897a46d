import type { FastifyInstance } from 'fastify'

/**
 * One log line per request. The route pattern stands in for the URL, so nothing a
 * client put in the path or the query (a misplaced key) reaches the log.
 */
export function registerAccessLog (app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({
      method: request.method,
      route: request.routeOptions.url ?? '(no route)',
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100
    }, 'request')
    done()
  })
}
