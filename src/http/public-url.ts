import type { FastifyRequest } from 'fastify'

/**
 * The API's base address (ending in /v1) as the caller sees it: PUBLIC_BASE_URL
 * when set, else built from the request's Host header, else (HTTP/1.0 may omit it)
 * from the address the request came in on.
 * @example baseUrlOf(request, undefined) // 'http://127.0.0.1:8080/v1'
 */
export function baseUrlOf (request: FastifyRequest, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ?? `${request.protocol}://${request.host || localAuthority(request)}/v1`
}

/** @example localAuthority(request) // '[::1]:8080' */
function localAuthority (request: FastifyRequest): string {
  const { localAddress = '', localPort } = request.socket
  return `${localAddress.includes(':') ? `[${localAddress}]` : localAddress}:${localPort}`
}

/**
 * The interactive docs page next to the base address: …/v1 becomes …/docs/. With the slash, the
 * page links its assets relative to itself, so it renders behind a proxy's path prefix too.
 */
export function docsUrlOf (baseUrl: string): string {
  return `${baseUrl.replace(/\/v1$/, '')}/docs/`
}
