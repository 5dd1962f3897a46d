/**
 * mulberry32: a 32-bit state, a few operations a draw, and the same sequence for the
 * same seed (`petstore seed`, and the bench's random ids and cursors).
 * @returns a function giving the next uint32
 * @example const next = mulberry32(1); next() // the same first number every time
 */
export function mulberry32 (seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6D2B79F5) | 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}
