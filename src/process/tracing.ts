/**
 * The OpenTelemetry SDK of a serving process, imported only when traces are on, so that off,
 * none of it is loaded. Spans leave in batches over OTLP/HTTP; the SDK reads the endpoint, its
 * headers, the sampler (OTEL_TRACES_SAMPLER) and the batch settings from the standard variables.
 */
import { DiagLogLevel, diag } from '@opentelemetry/api'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import type { Logger } from 'pino'
import type { Tracing } from '../config.js'
import { tracedStore } from '../store/traced-store.js'
import type { Store } from '../store/store.js'

export interface RunningTracing {
  /** The store with a span per call. */
  traceStore: (store: Store) => Store
  /** Exports the spans still pending (within OTEL_EXPORTER_OTLP_TIMEOUT), then stops; never throws. */
  shutdown: () => Promise<void>
}

/**
 * Registers the tracer provider, the W3C trace-context propagator and the async context for
 * the whole process; an export that fails is a warning in the log.
 * @example const tracing = await startTracing({ protocol: 'http/protobuf' }, logger)
 */
export async function startTracing ({ protocol }: Tracing, logger: Logger): Promise<RunningTracing> {
  diag.setLogger({
    error: (message) => { logger.warn(`traces: ${message}`) },
    warn: (message) => { logger.warn(`traces: ${message}`) },
    info: () => {},
    debug: () => {},
    verbose: () => {}
  }, DiagLogLevel.WARN)
  // The SDK has no gRPC exporter here: any other protocol is sent as the default, http/protobuf.
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') logger.warn(`traces: protocol ${protocol} is not supported; sending http/protobuf`)
  const { OTLPTraceExporter } = protocol === 'http/json'
    ? await import('@opentelemetry/exporter-trace-otlp-http')
    : await import('@opentelemetry/exporter-trace-otlp-proto')
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, come last and win.
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': 'petstore' }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())]
  })
  provider.register()
  return {
    traceStore: tracedStore,
    shutdown: async () => {
      // A collector that is down costs the last spans, never a clean exit.
      try {
        await provider.shutdown()
      } catch (err) {
        logger.warn({ err }, 'traces: the last spans were not exported')
      }
    }
  }
}
