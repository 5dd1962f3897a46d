/**
 * The request limits the interface publishes: the HTTP server enforces them and the OpenAPI
 * document and the error messages quote them, from these constants alone.
 */

/** The largest request body (a create's JSON), and so the longest line `petstore import` takes. */
export const BODY_LIMIT_BYTES = 16 * 1024
/** The largest request headers, in all. */
export const HEADER_LIMIT_BYTES = 16 * 1024
/** The longest request target. */
export const URL_LIMIT_BYTES = 8 * 1024

/** How long a client may take to send its headers, and its whole request. */
export interface RequestTimeouts {
  headersMs: number
  requestMs: number
}

export const REQUEST_TIMEOUTS: RequestTimeouts = { headersMs: 10_000, requestMs: 30_000 }

/** The per-key rate limit unless RATE_LIMIT says otherwise: requests in each window. */
export const RATE_LIMIT_DEFAULT = 6000
export const RATE_LIMIT_WINDOW_MS = 60_000
