/** The flags of `keys create` and `keys rotate`: scopes, durations, instants, rate limits; a bad one is one line naming it. */
import { API_KEY_SCOPES, type ApiKeyScope } from '../schemas/scopes.js'
import { CliError } from './errors.js'

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const
const DURATION = /^(0|[1-9][0-9]{0,9})([smhd])$/
/** The longest lifetime or grace: ten years. */
const DURATION_MAX_SECONDS = 3_650 * 86_400
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/i

/**
 * `pets:read`, `pets:write` or both, comma-separated.
 * @example parseScopes('--scopes', 'pets:read') // ['pets:read']
 */
export function parseScopes (flag: string, raw: string): ApiKeyScope[] {
  const scopes = raw.split(',').map((scope) => scope.trim())
  const unknown = scopes.find((scope) => !(API_KEY_SCOPES as readonly string[]).includes(scope))
  if (unknown !== undefined) throw new CliError(`${flag}: ${JSON.stringify(unknown)} is no scope; use ${API_KEY_SCOPES.join(', ')} or both, comma-separated`)
  return API_KEY_SCOPES.filter((scope) => scopes.includes(scope))
}

/**
 * A positive integer and a unit (`s`, `m`, `h`, `d`), at most 3650d, in seconds; `0s` too when `zero` is allowed.
 * @example parseDuration('--expires-in', '90d') // 7776000
 */
export function parseDuration (flag: string, raw: string, { zero = false } = {}): number {
  const match = DURATION.exec(raw)
  const seconds = match === null ? NaN : Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS]
  if (!(seconds <= DURATION_MAX_SECONDS) || (seconds === 0 && !zero)) {
    throw new CliError(`${flag}: must be ${zero ? 'an integer from 0' : 'a positive integer'} followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d`)
  }
  return seconds
}

/**
 * An RFC 3339 instant with its offset, in the future.
 * @example parseFutureInstant('--expires-at', '2030-12-05T00:00:00Z')
 */
export function parseFutureInstant (flag: string, raw: string, now = new Date()): Date {
  const match = INSTANT.exec(raw)
  const at = new Date(raw)
  const [year, month, day, hour, minute, second] = (match ?? []).slice(1, 7).map(Number) as number[]
  const real = match !== null && !Number.isNaN(at.getTime()) && hour! < 24 && minute! < 60 && second! < 60 &&
    new Date(Date.UTC(year!, month! - 1, day!)).getUTCDate() === day
  if (!real) throw new CliError(`${flag}: must be an RFC 3339 instant with its offset, such as 2030-12-05T00:00:00Z`)
  if (at.getTime() <= now.getTime()) throw new CliError(`${flag}: ${raw} is in the past`)
  return at
}

/**
 * Requests a minute, `0` for no limit.
 * @example parseRateLimit('--rate-limit', '600') // 600
 */
export function parseRateLimit (flag: string, raw: string): number {
  if (!/^(0|[1-9][0-9]{0,8})$/.test(raw)) throw new CliError(`${flag}: must be a number of requests a minute from 0 (no limit) to 999999999`)
  return Number(raw)
}
