/**
 * Client-side throttling as Google's SRE book describes it ("Handling Overload"): a client counts
 * its tries of the last two minutes and those the service accepted, and refuses a new try itself
 * with probability max(0, (tries − K·accepts) / (tries + 1)), so it stops sending what would be
 * refused once the service refuses most of what it is asked.
 */

/** The SRE book's K: the client's tries may reach twice its accepts before it refuses any. */
const K = 2
/** The SRE book's history: the last two minutes. */
const WINDOW_SECONDS = 120

/**
 * The counts of the last 120 seconds, in one bucket a second, emptied as the seconds leave the
 * window when the next try looks: no timer, about 1 KB per client.
 * @example
 * const throttle = new AdaptiveThrottle()
 * if (!throttle.admits(Date.now(), Math.random)) throw new Error('throttled')
 * throttle.answered(Date.now(), response.status !== 429 && response.status !== 503)
 */
export class AdaptiveThrottle {
  readonly #tries = new Uint32Array(WINDOW_SECONDS)
  readonly #accepts = new Uint32Array(WINDOW_SECONDS)
  #triesInWindow = 0
  #acceptsInWindow = 0
  /** The second of the newest bucket; undefined before the first count. */
  #second: number | undefined

  /** Tries counted in the last two minutes: the answered ones and those refused here. */
  get tries (): number {
    return this.#triesInWindow
  }

  /** Tries of the last two minutes that the service accepted. */
  get accepts (): number {
    return this.#acceptsInWindow
  }

  /**
   * Whether a try may go out at `now` (milliseconds since the epoch); one refused here counts as a
   * try the service did not accept, so a client that keeps calling refuses more (the SRE book's rule).
   * @example if (!throttle.admits(clock.now(), Math.random)) throw throttledError()
   */
  admits (now: number, random: () => number): boolean {
    this.#advance(now)
    const rejection = (this.#triesInWindow - K * this.#acceptsInWindow) / (this.#triesInWindow + 1)
    if (rejection <= 0 || random() >= rejection) return true
    this.#count(false)
    return false
  }

  /**
   * Counts a try the service answered: accepted unless it said 429 or 503.
   * @example throttle.answered(Date.now(), true)
   */
  answered (now: number, accepted: boolean): void {
    this.#advance(now)
    this.#count(accepted)
  }

  #count (accepted: boolean): void {
    const slot = slotOf(this.#second!)
    this.#tries[slot]!++
    this.#triesInWindow++
    if (!accepted) return
    this.#accepts[slot]!++
    this.#acceptsInWindow++
  }

  /** Moves the newest bucket to `now`'s second, emptying those of the seconds that left the window; a clock set back counts on in the newest. */
  #advance (now: number): void {
    const second = Math.floor(now / 1000)
    if (this.#second !== undefined && second <= this.#second) return
    const from = this.#second === undefined ? second : Math.max(this.#second + 1, second - WINDOW_SECONDS + 1)
    for (let s = from; s <= second; s++) {
      const slot = slotOf(s)
      this.#triesInWindow -= this.#tries[slot]!
      this.#acceptsInWindow -= this.#accepts[slot]!
      this.#tries[slot] = 0
      this.#accepts[slot] = 0
    }
    this.#second = second
  }
}

function slotOf (second: number): number {
  return ((second % WINDOW_SECONDS) + WINDOW_SECONDS) % WINDOW_SECONDS
}
