/**
 * libpq's address of a database, as a `postgres://` URL: one host or several
 * (`postgres://u@db1:5432,db2/petstore?target_session_attrs=read-write`, each port optional),
 * and which of them a connection may settle on. The `pg` driver takes one host
 * (brianc/node-postgres#1470): each host's own single-host URL goes to it in turn
 * (src/store/postgres/host-list-pool.ts). No import of `pg` here: config.ts checks
 * addresses with it at start.
 */

/** libpq's values of `target_session_attrs` (https://www.postgresql.org/docs/current/libpq-connect.html). */
const TARGET_SESSION_ATTRS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const
export type TargetSessionAttrs = typeof TARGET_SESSION_ATTRS[number]

export interface DatabaseAddress {
  /** One single-host URL per host, in the order given; the same path, credentials and parameters. */
  hosts: readonly HostUrl[]
  target: TargetSessionAttrs
}

export interface HostUrl {
  /** `host:port` as written, for messages. */
  label: string
  /** A URL the driver takes: this host alone, `target_session_attrs` left out. */
  url: string
}

/** An address that breaks libpq's form; the message is the rule alone, as config.ts shows it. */
export class MalformedAddress extends Error {
  override name = 'MalformedAddress'
}

// userinfo@ is optional; the host list runs to the first `/`, `?` or `#`.
const URL_FORM = /^(postgres(?:ql)?:\/\/)(?:([^/?#]*)@)?([^/?#]*)(.*)$/s
// A name, an IPv4 address, a bracketed IPv6 address, or a percent-encoded socket folder; then an optional port.
const HOST_FORM = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]*)(?::(.*))?$/

/**
 * Reads a `postgres://` or `postgresql://` URL. With several hosts and no target_session_attrs,
 * `severalHosts` (read-write for DATABASE_URL: the service writes); one host alone keeps libpq's default, any.
 * @throws MalformedAddress `has an empty host in its host list`
 * @example parseAddress('postgres://u@db1,db2:5433/petstore').hosts.map((h) => h.label) // ['db1', 'db2:5433']
 */
export function parseAddress (raw: string, severalHosts: TargetSessionAttrs = 'read-write'): DatabaseAddress {
  const form = URL_FORM.exec(raw)
  if (form === null) throw new MalformedAddress('must be a postgres:// URL, such as postgres://USER@HOST:PORT/DB')
  const [, scheme = '', userinfo, hostList = '', rest = ''] = form
  const [path = '', query = ''] = splitOnce(rest.replace(/#.*$/s, ''), '?')
  const params = new URLSearchParams(query)
  const attrs = params.getAll('target_session_attrs')
  params.delete('target_session_attrs')
  const entries = hostList.split(',')
  if (attrs.length > 1) throw new MalformedAddress('gives target_session_attrs more than once')
  const target = attrs[0] ?? (entries.length > 1 ? severalHosts : 'any')
  if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(target)) {
    throw new MalformedAddress(`target_session_attrs must be one of ${TARGET_SESSION_ATTRS.join(', ')}: ${target} is not`)
  }
  const tail = `${path}${params.size > 0 ? `?${params.toString()}` : ''}`
  const hosts = entries.map((entry) => {
    const parts = HOST_FORM.exec(entry)
    if (parts === null) throw new MalformedAddress(`must list hosts as HOST:PORT separated by commas: ${entry} is not one`)
    const [, host = '', port] = parts
    if (host === '' && entries.length > 1) throw new MalformedAddress('has an empty host in its host list')
    if (port !== undefined && !/^[0-9]{1,5}$/.test(port)) throw new MalformedAddress(`must give each port as an integer from 1 to 65535: ${entry} does not`)
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw new MalformedAddress(`must give each port as an integer from 1 to 65535: ${entry} does not`)
    // One host as given: the driver reads the very URL the operator wrote, but for target_session_attrs.
    const url = entries.length === 1 && attrs.length === 0 ? raw : `${scheme}${userinfo === undefined ? '' : `${userinfo}@`}${entry}${tail}`
    // No host (postgres:// alone, postgres:///petstore): the driver reads PGHOST, as libpq does.
    return { label: host === '' ? 'PGHOST' : entry, url }
  })
  return { hosts, target: target as TargetSessionAttrs }
}

function splitOnce (text: string, separator: string): [string, string] {
  const at = text.indexOf(separator)
  return at === -1 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)]
}
