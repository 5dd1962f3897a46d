/**
 * mulberry32: a small seeded generator, so the random choices of a run (ids,
 * cursors) are the same from one run to the next.
 * @example const random = seededRandom(7); random() // 0.0117…, every time
 */
export function seededRandom (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
