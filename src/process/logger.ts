import pino, { type DestinationStream, type Logger } from 'pino'

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
