/**
 * A typed client of the Pet Store API: fetch only, types and answer checks generated
 * from the OpenAPI document of the server's own schemas, exact int64 values, safe retries.
 */
import type { components } from './generated/openapi.js'
import { AdaptiveThrottle } from './adaptive-throttle.js'
import { parseExactJson, stringifyExactJson } from './exact-json.js'
import { PetstoreError, type PetstoreErrorCode } from './petstore-error.js'
import { matchesSchema } from './schema-check.js'

/** An animal of the catalogue, as the API answers it. */
export type Pet = components['schemas']['Pet']
/** An animal to add: no `id` (the service assigns it), `categoryId` required, `status` default `available`. */
export type NewPet = components['schemas']['NewPet']
export type PetStatus = components['schemas']['PetStatus']
/** An int64: a number when it is a safe integer, else a bigint, so that equal values are `===`. */
export type Int64 = Pet['id']

export interface PetstoreClientOptions {
  /** The API's base address, version segment included: `https://api.example.com/v1`. */
  baseUrl: string
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string
  /** Tries per call, the first included (default: as many as `retryBudgetMs` allows): 429, 503 and network failures are retried. */
  maxAttempts?: number
  /** How long a call keeps retrying, from its start (default 30 s): a database failover answers 503 for about 11 s. */
  retryBudgetMs?: number
  /** First back-off when the server sends no `Retry-After` (default 200 ms; doubles each try). */
  retryDelayMs?: number
  /** Longest wait the client accepts; a longer `Retry-After` fails at once (default 30 s). */
  maxRetryDelayMs?: number
  /** Longest wait for one try's full answer (default 30 s); a try that takes longer counts as a network failure. */
  timeoutMs?: number
  /** Another fetch (a proxy agent, a test double); default the global fetch. */
  fetch?: typeof globalThis.fetch
  /**
   * Client-side throttling (default true): when the service refused (429, 503) most of this client's tries of the
   * last 2 minutes, a share of its tries fail at once as `throttled`, unsent. False sends every try.
   */
  throttle?: boolean
  /** The random share of each wait and the throttle's draws, a number from 0 to under 1 (default `Math.random`): a simulation or a test brings its own. */
  random?: () => number
  /** The clock of the waits between tries, of `retryBudgetMs` and of the throttle's 2 minutes (default `Date.now` and `setTimeout`): a simulation or a test brings its own. */
  clock?: RetryClock
}

/** What the client waits on between tries. */
export interface RetryClock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now: () => number
  /** Resolves after `ms` milliseconds. */
  sleep: (ms: number) => Promise<void>
}

export interface ListPetsOptions {
  /** 1 to 100, default 20 (the server's). */
  limit?: number
  status?: PetStatus
  /**
   * The `cursor` of the previous page, to read the next one. It does not remember the previous
   * call: pass the same `status` (else 400 `validation_failed`) and `limit` (else the page size changes).
   */
  cursor?: string
}

/** The options of a next page's call: the first call's `limit` and `status`, and the cursor. */
export type NextPageOptions = ListPetsOptions & { cursor: string }

export interface PetPage {
  pets: Pet[]
  /** `listPets(page.next)` reads the next page with the same `limit` and `status`; undefined on the last page. */
  next: NextPageOptions | undefined
  /** The next page's opaque cursor (to store, say); undefined on the last page. Pass it with the same `limit` and `status`. */
  cursor: string | undefined
}

export interface CreatePetOptions {
  /** Default a fresh `crypto.randomUUID()`: the same key on every retry of this call. */
  idempotencyKey?: string
}

interface Answer {
  response: Response
  body: unknown
}

const RETRIED_STATUSES = new Set([429, 503])

const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i

/**
 * @example
 * const client = new PetstoreClient({ baseUrl: 'http://127.0.0.1:8080/v1', apiKey: process.env.PETSTORE_API_KEY! })
 * const rex = await client.createPet({ name: 'Rex', categoryId: 3 })
 * for await (const pet of client.pets({ status: 'available' })) console.log(pet.id, pet.name)
 */
export class PetstoreClient {
  readonly #baseUrl: string
  readonly #apiKey: string
  readonly #maxAttempts: number
  readonly #retryDelayMs: number
  readonly #maxRetryDelayMs: number
  readonly #retryBudgetMs: number
  readonly #timeoutMs: number
  readonly #fetch: typeof globalThis.fetch
  readonly #random: () => number
  readonly #clock: RetryClock
  readonly #throttle: AdaptiveThrottle | undefined

  constructor (options: PetstoreClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#apiKey = options.apiKey
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? Infinity)
    this.#retryDelayMs = options.retryDelayMs ?? 200
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000
    this.#retryBudgetMs = options.retryBudgetMs ?? 30_000
    this.#timeoutMs = options.timeoutMs ?? 30_000
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.#random = options.random ?? Math.random
    this.#clock = options.clock ?? { now: Date.now, sleep }
    this.#throttle = options.throttle === false ? undefined : new AdaptiveThrottle()
  }

  /**
   * One page of animals in ascending id order.
   * @example
   * const page = await client.listPets({ limit: 50, status: 'sold' })
   * if (page.next !== undefined) await client.listPets(page.next)   // the next 50 sold
   */
  async listPets (options: ListPetsOptions = {}): Promise<PetPage> {
    const query = new URLSearchParams()
    if (options.limit !== undefined) query.set('limit', String(options.limit))
    if (options.status !== undefined) query.set('status', options.status)
    if (options.cursor !== undefined) query.set('cursor', options.cursor)
    const search = query.size === 0 ? '' : `?${query}`
    const url = `${this.#baseUrl}/pets${search}`
    const { response, body } = await this.#call('GET', url)
    if (!isAnswer('Pets', body)) throw answerError('invalid_response', 'GET /pets: the response is not an array of animals', response)
    const link = nextLinkOf(response.headers.get('link'), url)
    const cursor = link === undefined ? undefined : new URL(link).searchParams.get('cursor') ?? ''
    if (cursor === '') throw answerError('invalid_response', 'GET /pets: Link rel="next" without a cursor', response)
    // The server refuses a cursor with another status, and a cursor alone would fall back to 20 a page.
    const next = cursor === undefined ? undefined : { ...definedOf({ limit: options.limit, status: options.status }), cursor }
    return { pets: body, next, cursor }
  }

  /**
   * Every matching animal, page after page: the cursor of `Link: rel="next"`, asked of `baseUrl`.
   * @example for await (const pet of client.pets({ limit: 100 })) total++
   */
  async * pets (options: Omit<ListPetsOptions, 'cursor'> = {}): AsyncGenerator<Pet, void, undefined> {
    let page = await this.listPets(options)
    for (;;) {
      yield * page.pets
      if (page.next === undefined) return
      // Only the cursor is taken from the link: its address may be another origin (PUBLIC_BASE_URL), which must not get the key.
      page = await this.listPets(page.next)
    }
  }

  /**
   * Adds an animal. A retried call re-sends its Idempotency-Key, so the server
   * creates the animal once however many tries it takes.
   * @example const pet = await client.createPet({ name: 'Rex', categoryId: 9007199254740993n })
   */
  async createPet (pet: NewPet, options: CreatePetOptions = {}): Promise<Pet> {
    const answer = await this.#call('POST', `${this.#baseUrl}/pets`, {
      body: stringifyExactJson(pet),
      idempotencyKey: options.idempotencyKey ?? globalThis.crypto.randomUUID()
    })
    return petOf(answer, 'POST /pets')
  }

  /**
   * One animal by id.
   * @deprecated The API removes `GET /pets/{petId}` on 2030-12-05 (it answers 410 `gone` from then on); use `listPets` with the `status` filter.
   * @example const pet = await client.getPet(42)
   */
  async getPet (id: Int64): Promise<Pet> {
    const answer = await this.#call('GET', `${this.#baseUrl}/pets/${id}`)
    return petOf(answer, `GET /pets/${id}`)
  }

  async #call (method: 'GET' | 'POST', url: string, send: { body?: string, idempotencyKey?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' }
    if (send.body !== undefined) headers['content-type'] = 'application/json'
    if (send.idempotencyKey !== undefined) headers['idempotency-key'] = send.idempotencyKey
    const what = `${method} ${new URL(url).pathname}`
    const retriesEnd = this.#clock.now() + this.#retryBudgetMs

    // The error a retry follows: the cause of a throttled retry's error.
    let previous: PetstoreError | undefined
    for (let attempt = 1; ; attempt++) {
      if (this.#throttle?.admits(this.#clock.now(), this.#random) === false) throw throttledError(this.#throttle, what, previous)
      const canRetry = attempt < this.#maxAttempts
      let response: Response
      let text: string
      try {
        // The API never redirects; followed, a 301 or 303 turns a create into a GET of whatever it names.
        response = await this.#fetch(url, { method, headers, body: send.body, redirect: 'manual', signal: AbortSignal.timeout(this.#timeoutMs) })
        text = await response.text()
      } catch (err) {
        // Safe to repeat: a GET, or a POST whose Idempotency-Key makes the server create once.
        const delay = canRetry ? this.#waitBeforeRetry(undefined, attempt, retriesEnd) : undefined
        if (delay !== undefined) { await this.#clock.sleep(delay); continue }
        throw new PetstoreError('network_error', `${what}: ${(err as Error).message}`, 0, { cause: err })
      }
      // A try without an answer is not counted: it says nothing of the service's load, and its retry is what makes a create safe.
      this.#throttle?.answered(this.#clock.now(), !RETRIED_STATUSES.has(response.status))
      if (response.ok) return { response, body: parseBody(response, text, what) }
      // A browser hides a redirect behind an opaque response of status 0.
      if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
        throw answerError('invalid_response', `${what}: HTTP ${response.status} redirect to ${response.headers.get('location') ?? 'nowhere'}; the API never redirects`, response)
      }

      const error = errorOf(response, text, what)
      if (canRetry && isRetried(error, send.idempotencyKey !== undefined)) {
        const delay = this.#waitBeforeRetry(retryAfterMs(response.headers.get('retry-after'), this.#clock.now()), attempt, retriesEnd)
        if (delay !== undefined) { previous = error; await this.#clock.sleep(delay); continue }
      }
      throw error
    }
  }

  /**
   * The wait before the next try, or undefined when it would pass `maxRetryDelayMs` or end past
   * the budget. Without `Retry-After`, the back-off: half its ceiling and a random share of the
   * other half. With it, at least what the server asked, plus a random share of up to half of
   * it (or of `retryDelayMs`, when larger) that the budget and `maxRetryDelayMs` still allow:
   * clients the server refused together come back spread out, not together.
   */
  #waitBeforeRetry (retryAfter: number | undefined, attempt: number, retriesEnd: number): number | undefined {
    const longest = Math.min(this.#maxRetryDelayMs, retriesEnd - this.#clock.now())
    if (retryAfter === undefined) {
      const ceiling = Math.min(this.#maxRetryDelayMs, this.#retryDelayMs * 2 ** (attempt - 1))
      const delay = ceiling / 2 + this.#random() * ceiling / 2
      return delay <= longest ? delay : undefined
    }
    if (retryAfter > longest) return undefined
    const share = Math.min(Math.max(retryAfter, this.#retryDelayMs) / 2, longest - retryAfter)
    return retryAfter + this.#random() * share
  }
}

function isRetried (error: PetstoreError, idempotent: boolean): boolean {
  // 409 idempotency_conflict: our own earlier try is still in flight (e.g. its connection broke).
  return RETRIED_STATUSES.has(error.status) || (idempotent && error.code === 'idempotency_conflict')
}

/** A try the throttle kept from the network: status 0, as no answer came; on a retry, the error it follows as its cause. */
function throttledError (throttle: AdaptiveThrottle, what: string, cause: PetstoreError | undefined): PetstoreError {
  return new PetstoreError('throttled', `${what}: not sent: only ${throttle.accepts} of this client's ${throttle.tries} tries in the last 2 minutes were accepted (client-side throttling)`, 0, { cause })
}

function petOf ({ response, body }: Answer, what: string): Pet {
  if (!isAnswer('Pet', body)) throw answerError('invalid_response', `${what}: the response is not an animal`, response)
  return body
}

// The API's own schemas, with fields a newer server may add let through: it must not break an older client.
function isAnswer<K extends 'Pet' | 'Pets' | 'Error'> (schema: K, body: unknown): body is components['schemas'][K] {
  return matchesSchema(schema, body)
}

function isJson (response: Response): boolean {
  return JSON_MEDIA_TYPE.test(response.headers.get('content-type') ?? '')
}

function parseBody (response: Response, text: string, what: string): unknown {
  if (!isJson(response)) throw answerError('invalid_response', `${what}: the response is not JSON (Content-Type: ${response.headers.get('content-type') ?? 'none'})`, response)
  try {
    return parseExactJson(text)
  } catch {
    throw answerError('invalid_response', `${what}: the response is not JSON`, response)
  }
}

/** The API's Error body as a PetstoreError; anything else, an unknown `code` included, is `invalid_response`. */
function errorOf (response: Response, text: string, what: string): PetstoreError {
  const { status } = response
  let body: unknown
  try { body = isJson(response) ? parseExactJson(text) : undefined } catch { body = undefined }
  if (isAnswer('Error', body)) return answerError(body.code, body.message, response)
  const code = (body as { code?: unknown } | undefined)?.code
  if (typeof code === 'string') return answerError('invalid_response', `${what}: HTTP ${status} with code ${JSON.stringify(code)}, which is not one of the API's`, response)
  return answerError('invalid_response', `${what}: HTTP ${status} without an Error body`, response)
}

/** An error about an answer, with the headers its caller acts on: `Retry-After` and `X-Request-Id`. */
function answerError (code: PetstoreErrorCode, message: string, response: Response): PetstoreError {
  const retryAfter = retryAfterMs(response.headers.get('retry-after'), Date.now())
  return new PetstoreError(code, message, response.status, {
    retryAfterSeconds: retryAfter === undefined ? undefined : Math.ceil(retryAfter / 1000),
    requestId: response.headers.get('x-request-id') ?? undefined
  })
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3), in milliseconds from `now`. */
function retryAfterMs (header: string | null, now: number): number | undefined {
  if (header === null) return undefined
  if (/^[0-9]+$/.test(header.trim())) return Number(header.trim()) * 1000
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** The `rel="next"` target of an RFC 8288 Link header, resolved against the request URL. */
function nextLinkOf (header: string | null, base: string): string | undefined {
  if (header === null) return undefined
  for (const link of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(link)
    if (match !== null && /;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(match[2]!)) return new URL(match[1]!, base).href
  }
  return undefined
}

function definedOf<T extends object> (fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>
}

async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}
