import type { FastifyBaseLogger } from 'fastify'
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger } from 'pino'

/**
 * JSON lines on stdout through pino's own destination. Credentials are never logged; the
 * redaction is a second guard should a header object ever reach a log call.
 * Not synchronous: each write(2) carries the lines logged while the one before it was in
 * flight (about 6 µs of CPU a line against 9 to 12 µs, one write per line, docs/decisions.md);
 * pino writes what is pending when the process exits.
 * @example const logger = createLogger('info')
 */
export function createLogger (level: string, destination: DestinationStream = pino.destination({ dest: 1, sync: false })): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'], censor: '[redacted]' }
  }, destination)
}

type LogMethod = (...args: unknown[]) => void

/**
 * Fastify's `request.log`, made a pino child only when something logs through it (an error,
 * a warning): making one serializes its bindings on every request, while the request line,
 * which every request writes, goes through the root logger with the id
 * (src/http/plugins/access-log.ts).
 * @example Fastify({ childLoggerFactory: (logger, bindings, options) => new DeferredChildLogger(logger, bindings, options) })
 */
export class DeferredChildLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #made: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get #child (): FastifyBaseLogger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options)
    return this.#made
  }

  get level (): string { return this.#child.level }
  set level (level: string) { this.#child.level = level }
  fatal (...args: unknown[]): void { (this.#child.fatal as LogMethod)(...args) }
  error (...args: unknown[]): void { (this.#child.error as LogMethod)(...args) }
  warn (...args: unknown[]): void { (this.#child.warn as LogMethod)(...args) }
  info (...args: unknown[]): void { (this.#child.info as LogMethod)(...args) }
  debug (...args: unknown[]): void { (this.#child.debug as LogMethod)(...args) }
  trace (...args: unknown[]): void { (this.#child.trace as LogMethod)(...args) }
  silent (...args: unknown[]): void { (this.#child.silent as LogMethod)(...args) }
  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger { return this.#child.child(bindings, options) }
}
