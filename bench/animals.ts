/**
 * The animals every target serves: the same list for the service (through
 * `petstore import`), the ceiling (in memory) and json-server (its db.json).
 * Each animal is a pure function of its id, so no file has to be shared.
 */
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'

export const STATUSES = ['available', 'pending', 'sold'] as const
export type Status = typeof STATUSES[number]

export interface Animal {
  id: number
  name: string
  categoryId: number
  status: Status
}

const NAMES = ['Rex', 'Tom', 'Bella', 'Milo', 'Luna', 'Coco', 'Max', 'Nala']

// A 32-bit integer hash (lowbias32): spreads consecutive ids over categories and statuses.
function mix (id: number): number {
  let x = id >>> 0
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d)
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b)
  return (x ^ (x >>> 16)) >>> 0
}

/**
 * The animal with this id: half are available, a quarter pending, a quarter sold.
 * @example animalAt(1) // { id: 1, name: 'Rex 1', categoryId: 6, status: 'available' }
 */
export function animalAt (id: number): Animal {
  const hash = mix(id)
  const draw = (hash >>> 8) & 3
  return {
    id,
    name: `${NAMES[hash % NAMES.length]!} ${id}`,
    categoryId: 1 + ((hash >>> 12) % 20),
    status: draw < 2 ? 'available' : STATUSES[draw - 1]!
  }
}

/**
 * Animals 1..count, in id order.
 * @example generateAnimals(3).map((animal) => animal.id) // [1, 2, 3]
 */
export function generateAnimals (count: number): Animal[] {
  return Array.from({ length: count }, (_, index) => animalAt(index + 1))
}

/**
 * Writes animals 1..count as JSON Lines, the form `petstore import` reads.
 * @example await writeAnimalLines('/tmp/animals.jsonl', 10_000)
 */
export async function writeAnimalLines (path: string, count: number): Promise<void> {
  const out = createWriteStream(path)
  for (let id = 1; id <= count; id++) {
    // Honour back-pressure: a million lines would otherwise sit in memory at once.
    if (!out.write(`${JSON.stringify(animalAt(id))}\n`)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}
