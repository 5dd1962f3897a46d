import type { Command } from 'commander'
import { integer } from '../../schemas/operator-values.js'
import { PET_STATUSES } from '../../schemas/pets.js'
import type { NewPetRecord, Store } from '../../store/store.js'
import { CliError, describeFailure, isBug } from '../errors.js'
import { BATCH_SIZE_MAX, addSettingFlags, batchSizeOption, parseFlag } from '../options.js'
import { reportDone, startProgress, stoppedBy } from '../progress.js'
import { withStore } from '../with-store.js'

const COUNT_MAX = 100_000_000
const SEED_MAX = 2 ** 32 - 1
const CATEGORIES = 1000
const NAMES = ['Rex', 'Bella', 'Max', 'Luna', 'Charlie', 'Lucy', 'Milo', 'Daisy', 'Oscar', 'Coco', 'Simba', 'Nala', 'Rocky', 'Kiwi', 'Pepper', 'Ziggy']

/** mulberry32: a 32-bit state, a few operations a draw, the same uint32 sequence for the same seed. */
function mulberry32 (seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6D2B79F5) | 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}

/**
 * Adds `count` generated animals, `batchSize` per transaction, ids from the database.
 * @returns how many animals were added
 */
async function seedPets (store: Store, count: number, batchSize: number, seed: number): Promise<number> {
  const next = mulberry32(seed)
  const progress = startProgress('seeding', count)
  const batch: NewPetRecord[] = []
  let added = 0
  const stay = (): string => added === 0 ? 'nothing was added' : `the ${added} animals added before it stay in the database`
  try {
    while (added < count) {
      // Each batch is committed on its own: stopped between two, every animal counted stays.
      const signal = await progress.stopSignal()
      if (signal !== undefined) throw stoppedBy(signal, stay())
      batch.length = 0
      const size = Math.min(batchSize, count - added)
      for (let i = 0; i < size; i++) {
        // One draw per animal: its bits pick the name, the number, the category and the status.
        const r = next()
        batch.push({
          name: `${NAMES[r & 15]!} ${(r >>> 4) % 100 + 1}`,
          categoryId: (r >>> 11) % CATEGORIES + 1,
          status: PET_STATUSES[(r >>> 21) % 3]!
        })
      }
      try {
        await store.insertPets(batch)
      } catch (err) {
        if (isBug(err)) throw err
        // Each batch is committed on its own: those before the failure stay.
        throw new CliError(`${describeFailure(err)}; ${stay()}`, { cause: err })
      }
      added += size
      progress.update(added, added)
    }
    await store.analyze()
  } finally {
    progress.stop()
  }
  return added
}

export function registerSeedCommand (program: Command): void {
  const command = program.command('seed')
    .description('Add generated animals (names like "Rex 42", categories 1 to 1000, every status), ids from the database, in batched transactions.')
    .requiredOption('--count <n>', `how many animals to add (1 to ${COUNT_MAX})`)
    .addOption(batchSizeOption())
    .option('--seed <n>', `the same seed gives the same animals (0 to ${SEED_MAX})`, '1')
    .addHelpText('after', '\nExample:\n  petstore seed --count 1000000 --database-url sqlite:./data/petstore.db\n')
  addSettingFlags(command, ['databaseUrl']).action(async (options: { count: string, batchSize: string, seed: string }) => {
    const count = parseFlag('--count', options.count, integer(1, COUNT_MAX))
    const batchSize = parseFlag('--batch-size', options.batchSize, integer(1, BATCH_SIZE_MAX))
    const seed = parseFlag('--seed', options.seed, integer(0, SEED_MAX))
    const started = performance.now()
    const added = await withStore(command, (store) => seedPets(store, count, batchSize, seed))
    reportDone('seeded', added, started)
  })
}
