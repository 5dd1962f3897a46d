/**
 * Reads from a standby, never stale to the caller and never failed by it: the rule for
 * `listPets` and `getPet` when a read URL is set, above any SQL. The standby serves what it
 * can; whatever it cannot (unreachable, slow, in a recovery conflict, or any other failure)
 * the primary serves within the same request, and the standby is then left alone for a
 * while. An animal the standby does not have is asked of the primary before a 404: a create
 * acknowledged a moment ago may be on its way to a standby that just left synchronous mode.
 */
import type { ReadTarget, Store } from './store.js'

/** The reads a standby serves. */
export type StandbyReads = Pick<Store, 'listPets' | 'findPet' | 'close'>

export interface ReadRoutingOptions {
  /** A standby read slower than this is abandoned for the primary (about a second). */
  standbyTimeoutMs: number
  /** How long a standby that failed is left alone. */
  restMs: number
}

export const READ_ROUTING: ReadRoutingOptions = { standbyTimeoutMs: 1_000, restMs: 5_000 }

class StandbyTooSlow extends Error {
  override name = 'StandbyTooSlow'
}

/**
 * The primary's store with its reads routed through `standby`; `readCounts` counts them by target.
 * @example const store = routeReads(primary, await openPostgresStore(readUrl, { standby: true }), READ_ROUTING)
 */
export function routeReads (primary: Store, standby: StandbyReads, options: ReadRoutingOptions): Store {
  const counts: Record<ReadTarget, number> = { standby: 0, primary: 0, fallback: 0 }
  let restingUntil = 0

  async function fromStandby<T> (read: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const tooSlow = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new StandbyTooSlow(`the standby did not answer within ${options.standbyTimeoutMs} ms`)) }, options.standbyTimeoutMs)
    })
    const reading = read()
    reading.catch(() => {}) // abandoned when too slow: its late failure is nobody's
    try {
      return await Promise.race([reading, tooSlow])
    } finally {
      clearTimeout(timer)
    }
  }

  /** `missing`: an answer the primary must confirm (an animal not found). */
  async function routed<T> (onStandby: () => Promise<T>, onPrimary: () => Promise<T>, missing: (answer: T) => boolean = () => false): Promise<T> {
    if (Date.now() < restingUntil) {
      counts.primary++
      return await onPrimary()
    }
    let answer: T
    try {
      answer = await fromStandby(onStandby)
    } catch {
      restingUntil = Date.now() + options.restMs
      counts.fallback++
      return await onPrimary()
    }
    if (!missing(answer)) {
      counts.standby++
      return answer
    }
    counts.primary++
    return await onPrimary()
  }

  return {
    ...primary,
    listPets: async (query) => await routed(async () => await standby.listPets(query), async () => await primary.listPets(query)),
    findPet: async (id) => await routed(async () => await standby.findPet(id), async () => await primary.findPet(id), (pet) => pet === undefined),
    readCounts: async () => ({ ...counts }),
    close: async () => {
      await Promise.all([primary.close(), standby.close()])
    }
  }
}
