import { mulberry32 } from '../src/cli/seeded-random.js'

/**
 * Numbers in [0, 1) from the generator of `petstore seed`, so the random choices of a
 * run (ids, cursors) are the same from one run to the next.
 * @example const random = seededRandom(7); random() // 0.0117…, every time
 */
export function seededRandom (seed: number): () => number {
  const next = mulberry32(seed)
  return () => next() / 4294967296
}
