/**
 * Fastify's `rewriteUrl`: a path segment the router cannot percent-decode (`%ZZ`, `%C0`)
 * has its `%` taken literally, so the request still meets its route and the route's whole
 * lifecycle (the key, the rate limit, the request line, the metrics, getPet's headers and
 * its 410), and the route's validation answers the 400. Left to the router, such a path
 * was answered outside any route, with none of these.
 */
import type { RawRequestDefaultExpression } from 'fastify'

/** @example routableUrl({ url: '/v1/pets/%ZZ?limit=1' }) // '/v1/pets/%25ZZ?limit=1' */
export function routableUrl ({ url = '' }: Pick<RawRequestDefaultExpression, 'url'>): string {
  const percentAt = url.indexOf('%')
  const queryAt = url.indexOf('?')
  if (percentAt === -1 || (queryAt !== -1 && queryAt < percentAt)) return url
  const segments = (queryAt === -1 ? url : url.slice(0, queryAt)).split('/')
  let changed = false
  for (let i = 0; i < segments.length; i++) {
    if (decodes(segments[i]!)) continue
    segments[i] = segments[i]!.replaceAll('%', '%25')
    changed = true
  }
  return changed ? segments.join('/') + (queryAt === -1 ? '' : url.slice(queryAt)) : url
}

function decodes (segment: string): boolean {
  try {
    decodeURIComponent(segment)
    return true
  } catch {
    return false
  }
}
