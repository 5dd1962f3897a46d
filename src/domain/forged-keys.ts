/**
 * The rules against guessing API keys: failed authentications are counted per
 * client address, and past a limit a minute that address is refused any key not
 * already known to be valid (OWASP API2, API4).
 */
import { isIPv4, isIPv6 } from 'node:net'

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
  if (isIPv4(address) || !isIPv6(address)) return address
  const groups = ipv6Groups(address.split('%', 1)[0]!)
  if (groups.slice(0, 6).join() === '0,0,0,0,0,65535') {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.')
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`
}

/** @example ipv6Groups('::1') // [0, 0, 0, 0, 0, 0, 0, 1] */
function ipv6Groups (address: string): number[] {
  // A dotted IPv4 tail (::ffff:192.0.2.7) is the last two groups.
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`)
  const [head = '', tail] = text.split('::')
  const parse = (part: string): number[] => part === '' ? [] : part.split(':').map((group) => parseInt(group, 16))
  const before = parse(head)
  const after = tail === undefined ? [] : parse(tail)
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after]
}
