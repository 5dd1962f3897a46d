/**
 * The responses of the requests read in one iteration of the event loop are written
 * together, in its check phase (setImmediate), right after the poll phase that read them.
 *
 * Each write to a client that sleeps waiting for it (a proxy or a load generator on
 * the same host, on loopback) makes the kernel wake that client, and the wake-up is
 * charged to the writer: on this service's 2-core host, writing each answer at once cost
 * about as much CPU time as handling the request (docs/decisions.md has the figures).
 * Written back to back, the answers of a turn wake such a client far less often. A lone
 * request waits only for the end of its own turn.
 */
import type { DoneFuncWithErrOrRes, FastifyInstance, FastifyReply } from 'fastify'
import { logClientGone } from './access-log.js'

declare module 'fastify' {
  interface FastifyReply {
    /** Waiting in the batch of this turn. */
    held: boolean
  }
}

interface Held { reply: FastifyReply, send: DoneFuncWithErrOrRes, payload: unknown }

/** @example registerResponseBatching(app) // before any other onSend hook */
export function registerResponseBatching (app: FastifyInstance): void {
  let batch: Held[] = []
  const flush = (): void => {
    const sends = batch
    batch = []
    for (const entry of sends) {
      entry.reply.held = false
      // The client left while its request was handled (a create's commit, a key lookup):
      // nothing can be written, and no 'finish' will run the onResponse hooks.
      // Its socket may be closed before the response hears of it, in the same turn.
      if (entry.reply.raw.destroyed || entry.reply.raw.socket?.destroyed === true) logClientGone(entry.reply.request, entry.reply)
      else write(entry)
    }
  }
  app.decorateReply('held', false)
  app.addHook('onSend', (_request, reply, payload, send) => {
    // A reply is not "sent" while it is held: a handler that calls reply.send() without
    // returning the reply makes Fastify send it again; that second send is dropped.
    if (reply.held) return
    reply.held = true
    if (batch.length === 0) setImmediate(flush)
    batch.push({ reply, send, payload })
  })
}

/**
 * A write that throws (a header Node refuses) becomes that request's error, as it would
 * without the wait (Fastify's error handler answers it through this hook, a turn later);
 * the rest of the batch is still written.
 */
function write ({ send, payload }: Held): void {
  try {
    send(null, payload)
  } catch (err) {
    send(err as Error)
  }
}
