/**
 * The responses of one turn of the event loop are written together, right after it.
 *
 * Each write to a client that sleeps waiting for it (a proxy or a load generator on
 * the same host, on loopback) makes the kernel wake that client, and the wake-up is
 * charged to the writer: on this service's 2-core host it cost more than handling the
 * request. Written back to back, the answers of a turn wake such a client once. A lone
 * request waits only for the end of its own turn (docs/decisions.md).
 */
import type { DoneFuncWithErrOrRes, FastifyInstance } from 'fastify'

/** @example registerResponseBatching(app) // before any other onSend hook */
export function registerResponseBatching (app: FastifyInstance): void {
  let batch: Array<{ send: DoneFuncWithErrOrRes, payload: unknown }> = []
  const flush = (): void => {
    const sends = batch
    batch = []
    for (const { send, payload } of sends) {
      // A write that throws (a header Node refuses) becomes that request's error, as it
      // would without the wait; the rest of the batch is still written.
      try { send(null, payload) } catch (err) { send(err as Error) }
    }
  }
  app.addHook('onSend', (_request, _reply, payload, send) => {
    if (batch.length === 0) setImmediate(flush)
    batch.push({ send, payload })
  })
}
