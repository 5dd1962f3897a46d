/**
 * A separate process that opens the store at argv[2] and calls migrate() at the
 * instant argv[3] (ms since the epoch), so several processes migrate at the same moment.
 * Prints the versions it applied as JSON.
 */
import { openStore } from '../../src/store/open-store.js'

const [url, at] = process.argv.slice(2)
const store = await openStore(url!)
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(at) - Date.now() - 50)))
while (Date.now() < Number(at)); // spin the last moments: timers are too coarse to line processes up
try {
  process.stdout.write(`${JSON.stringify(await store.migrate())}\n`)
} finally {
  await store.close()
}
