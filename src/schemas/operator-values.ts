/**
 * The integers, durations and instants an operator writes, in a variable (src/config.ts) or a
 * flag (src/cli/): one rule each, whoever reads them. A value that breaks its rule throws
 * BrokenRule with the rule alone, which the caller prefixes with the name the operator gave:
 * `PORT: must be an integer from 1 to 65535`.
 */

/** A value that breaks its rule; the message is the rule alone, as in "must be …". */
export class BrokenRule extends Error {
  override name = 'BrokenRule'
}

/**
 * Plain decimal digits (leading zeros too) from `min` to `max`.
 * @example integer(1, 65535)('8080') // 8080
 */
export function integer (min: number, max: number): (raw: string) => number {
  return (raw) => {
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new BrokenRule(`must be an integer from ${min} to ${max}`)
    return Number(raw)
  }
}

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const
/** The longest duration: ten years. */
const DURATION_MAX_SECONDS = 3_650 * 86_400

/**
 * An integer and a unit (`s`, `m`, `h`, `d`), at most 3650d, in seconds; `0s` only when `zero` allows it.
 * @example duration()('90d') // 7776000
 */
export function duration ({ zero = false } = {}): (raw: string) => number {
  return (raw) => {
    const match = /^([0-9]+)([smhd])$/.exec(raw)
    const seconds = match === null ? NaN : Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS]
    if (!(seconds <= DURATION_MAX_SECONDS) || (seconds === 0 && !zero)) {
      throw new BrokenRule(`must be ${zero ? 'an integer from 0' : 'a positive integer'} followed by s, m, h or d (such as 90d, 12h, 45s), at most 3650d`)
    }
    return seconds
  }
}

// RFC 3339: T and Z in either case, a fraction of a second or none, and the offset always:
// without one, Date would read the value in the machine's time zone.
const INSTANT = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?(Z|([+-])([01]\d|2[0-3]):([0-5]\d))$/

/**
 * An RFC 3339 instant with its offset; a date or time that does not exist is refused, never rolled over.
 * @example instant('2030-12-05T09:00:00+09:00') // 2030-12-05T00:00:00.000Z
 */
export function instant (raw: string): Date {
  const form = INSTANT.exec(raw.toUpperCase())
  if (form === null) throw new BrokenRule('must be an RFC 3339 instant with its offset, YYYY-MM-DDThh:mm:ss[.fff] then Z or ±hh:mm, such as 2030-12-05T00:00:00Z')
  const [text, written = '', , , sign, hours = '0', minutes = '0'] = form
  const offsetMs = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000
  const time = Date.parse(text)
  // Date rolls over what does not exist (February 31 becomes March 3): the written time must come back.
  if (Number.isNaN(time) || new Date(time + offsetMs).toISOString().slice(0, 19) !== written) {
    throw new BrokenRule(`must be a date and time that exist: ${written} does not`)
  }
  return new Date(time)
}
