/**
 * Starts a worker thread of this folder from the built file or, run from the TypeScript
 * sources (tests, development), through tsx, since Node 20 gives worker threads no --import loader.
 */
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

const FROM_TYPESCRIPT = extname(fileURLToPath(import.meta.url)) === '.ts'

/** @example const worker = startThread('writer-thread', { path }) */
export function startThread (name: string, workerData: unknown): Worker {
  const entry = new URL(`./${name}${FROM_TYPESCRIPT ? '.ts' : '.js'}`, import.meta.url)
  if (!FROM_TYPESCRIPT) return new Worker(entry, { workerData })
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
    .then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}) })`
  return new Worker(bootstrap, { eval: true, workerData })
}
