import pino, { type DestinationStream, type Logger } from 'pino'
import { TurnWriter } from './log-destination.js'

/**
 * JSON lines on stdout. Credentials are never logged; the redaction is a second
 * guard should a header object ever reach a log call.
 * The lines of one turn of the event loop are written together after it
 * (src/log-destination.ts).
 * @example const logger = createLogger('info')
 */
export function createLogger (level: string, destination: DestinationStream = new TurnWriter(1)): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'], censor: '[redacted]' }
  }, destination)
}
