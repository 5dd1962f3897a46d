import pino, { type DestinationStream, type Logger } from 'pino'

/**
 * JSON lines on stdout. Credentials are never logged; the redaction is a second
 * guard should a header object ever reach a log call.
 * Stdout is written asynchronously: lines logged while a write is under way go out
 * together in the next one (one syscall for many requests under load), and pino
 * writes what is left synchronously when the process exits.
 * @example const logger = createLogger('info')
 */
export function createLogger (level: string, destination: DestinationStream = pino.destination({ dest: 1, sync: false })): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'], censor: '[redacted]' }
  }, destination)
}
