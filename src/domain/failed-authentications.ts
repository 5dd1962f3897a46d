/**
 * The rules against guessing API keys: failed authentications are counted per
 * client address, and past a limit a minute that address is refused any key not
 * already known to be valid (OWASP API2, API4).
 */
import ipaddr from 'ipaddr.js'

/** Failed authentications a client address may make in one window before it is throttled. */
export const FAILED_AUTH_LIMIT = 20
/** The fixed window of the count, from the address's first failure. */
export const FAILED_AUTH_WINDOW_MS = 60_000

/**
 * What an address is counted as: IPv4 as it is (IPv4-mapped IPv6 too), IPv6 by its /64
 * prefix, since one subscriber commonly holds a whole /64 (RFC 6177).
 * @example clientGroupOf('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64'
 * @example clientGroupOf('::ffff:192.0.2.7') // '192.0.2.7'
 */
export function clientGroupOf (address: string): string {
  if (!ipaddr.isValid(address)) return address
  const parsed = ipaddr.process(address)
  if (parsed instanceof ipaddr.IPv4) return parsed.toString()
  return `${parsed.parts.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`
}
