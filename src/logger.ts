import pino, { type DestinationStream, type Logger } from 'pino'

/**
 * JSON lines on stdout. Credentials are never logged; the redaction is a second
 * guard should a header object ever reach a log call.
 * @example const logger = createLogger('info')
 */
export function createLogger (level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'], censor: '[redacted]' }
  }, destination)
}
