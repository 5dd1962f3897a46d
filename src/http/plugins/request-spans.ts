import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { Span } from '@opentelemetry/api'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'

/**
 * A server span per request, by Fastify's own instrumentation (`@fastify/otel`), continuing the
 * caller's W3C `traceparent`; named by route (`GET /v1/pets/{petId}`), with the status and the
 * operation. Its trace id goes into the request's log lines. Registered before every other hook
 * and route, and only when traces are on (src/tracing.ts).
 */
async function requestSpansPlugin (app: FastifyInstance): Promise<void> {
  const instrumentation = new FastifyOtelInstrumentation({
    // One span per request, not one more per hook (a dozen and more on every request).
    instrumentHooks: false,
    instrumentHandler: false,
    // An exception event carries a stack and a message; the span's status says enough.
    recordExceptions: false,
    requestHook: describeRequestSpan
  })
  await app.register(instrumentation.plugin())
  app.addHook('onRequest', logWithTraceId)
}

/** @example await app.register(requestSpans) // before any other hook or route */
export const requestSpans = fp(requestSpansPlugin, { name: 'petstore-request-spans' })

function describeRequestSpan (span: Span, request: FastifyRequest): void {
  // Fastify builds routeOptions anew on every read.
  const route = request.routeOptions
  const pattern = route.url?.replace(/:(\w+)/g, '{$1}')
  span.updateName(pattern === undefined ? request.method : `${request.method} ${pattern}`)
  span.setAttributes({
    // The route, not the client's path and query: a cursor or a misplaced key stays out, as in the access log.
    'url.path': pattern ?? '(no route)',
    'petstore.operation': route.config.operation ?? 'unmatched'
  })
}

function logWithTraceId (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const { span } = request.opentelemetry()
  if (span !== null) {
    const { traceId, spanId } = span.spanContext()
    request.log = reply.log = request.log.child({ trace_id: traceId, span_id: spanId })
  }
  done()
}
