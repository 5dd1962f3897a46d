/**
 * Fastify's `rewriteUrl`: a target the router cannot read still meets every stage of the pipeline.
 * A path segment it cannot percent-decode (`%ZZ`, `%C0`) has its `%` taken literally: the request
 * meets its route, whose validation answers the 400. An absolute-form target whose origin it cannot
 * read gets a scheme it does not read at all: the catch-all (plugins/unrouted.ts) answers the 400,
 * after auth has judged the path behind that scheme (auth.ts).
 */
import type { RawRequestDefaultExpression } from 'fastify'

/** @example routableUrl({ url: '/v1/pets/%ZZ?limit=1' }) // '/v1/pets/%25ZZ?limit=1' */
export function routableUrl ({ url = '' }: Pick<RawRequestDefaultExpression, 'url'>): string {
  const decodable = withDecodableSegments(url)
  return isUnreadableTarget(url) ? `unreadable-${decodable}` : decodable
}

const HTTP_ORIGIN = /^https?:\/\/([^/?#]*)/i

/**
 * Whether the router (find-my-way) refuses the target: an http(s) absolute-form URL without a host,
 * with a fragment, or that does not parse.
 * @example isUnreadableTarget('http://x:99999/v1/pets') // true
 */
export function isUnreadableTarget (url: string): boolean {
  if (url.charCodeAt(0) === 0x2f) return false // '/': the origin-form of nearly every request
  const origin = HTTP_ORIGIN.exec(url)
  return origin !== null && (origin[1] === '' || url.includes('#') || !URL.canParse(url))
}

function withDecodableSegments (url: string): string {
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
