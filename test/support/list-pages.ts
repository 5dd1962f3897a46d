/**
 * The list read as a client pages it: `Link: <…>; rel="next"` followed from one page to the next
 * until a page has none.
 */
import assert from 'node:assert/strict'
import { AUTH } from './helper.js'

/** An animal as a list page sends it. */
export interface ListedPet { id: number, name: string, categoryId: number, status: string }

export interface ListPage {
  /** The URL this page was fetched from. */
  url: string
  /** The body as sent, for a parser of its own (exact int64 digits). */
  text: string
  pets: ListedPet[]
  /** The next page's URL, from this page's Link; undefined on the last page. */
  next: string | undefined
}

export interface FollowOptions {
  /** The origin that serves page `index` (0 first), whatever origin the Link names: to page across instances. */
  origin?: (index: number) => string
}

/**
 * The next page's URL in a list response, whose Link, when sent, is exactly one `rel="next"` entry.
 * @example const cursor = new URL(nextLink(await get(server, '/pets?limit=2'))!).searchParams.get('cursor')
 */
export function nextLink (response: Response): string | undefined {
  const link = response.headers.get('link')
  if (link === null) return undefined
  const next = /^<([^>]+)>; rel="next"$/.exec(link)?.[1]
  assert.ok(next !== undefined, `a list's Link is one rel="next" entry: ${link}`)
  return next
}

/**
 * Every page from `url` to the last, each asserted a 200, in order.
 * @example const pages = await followPages(`${server.api}/pets?limit=7`); assert.equal(pages.length, 7)
 */
export async function followPages (url: string, { origin }: FollowOptions = {}): Promise<ListPage[]> {
  const pages: ListPage[] = []
  for (let next: string | undefined = url; next !== undefined; next = pages.at(-1)!.next) {
    const target: string = origin === undefined ? next : new URL(new URL(next).pathname + new URL(next).search, origin(pages.length)).href
    const response = await fetch(target, { headers: AUTH })
    const text = await response.text()
    assert.equal(response.status, 200, `a list page: ${target} answered ${text}`)
    pages.push({ url: target, text, pets: JSON.parse(text) as ListedPet[], next: nextLink(response) })
  }
  return pages
}

/**
 * Every animal of the list from `url` on, paged to its end.
 * @example assert.deepEqual((await listAll(`${server.api}/pets?limit=100`)).map((pet) => pet.id), created)
 */
export async function listAll (url: string, options: FollowOptions = {}): Promise<ListedPet[]> {
  return (await followPages(url, options)).flatMap((page) => page.pets)
}
