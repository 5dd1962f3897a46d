import { createReadStream, open, statSync, type Stats } from 'node:fs'
import { Socket } from 'node:net'
import { ReadStream, isatty } from 'node:tty'
import { promisify } from 'node:util'
import type { Command } from 'commander'
import { MalformedJson, decodeUtf8 } from '../../schemas/json-reader.js'
import { INT64_MAX } from '../../schemas/int64.js'
import { integer } from '../../schemas/operator-values.js'
import type { Pet } from '../../schemas/pets.js'
import type { Store } from '../../store/store.js'
import { StoreUnavailable } from '../../store/store-errors.js'
import { CliError, describeFailure } from '../errors.js'
import { BATCH_SIZE_MAX, addSettingFlags, batchSizeOption, parseFlag } from '../options.js'
import { InvalidPetLine, LINE_LIMIT_BYTES, parsePetLine } from '../pet-lines.js'
import { reportDone, startProgress, stoppedBy } from '../progress.js'
import { withStore } from '../with-store.js'

const NEWLINE = 0x0a
const openAsync = promisify(open)

interface Source {
  stream: NodeJS.ReadableStream & { bytesRead?: number }
  /** Bytes to read, for the progress bar; undefined for stdin. */
  size: number | undefined
}

async function openSource (file: string): Promise<Source> {
  if (file === '-') return { stream: process.stdin, size: undefined }
  let stat: Stats
  try {
    stat = statSync(file)
  } catch (err) {
    throw new CliError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
  if (stat.isDirectory()) throw new CliError(`${file}: is a directory, not a file`)
  if (stat.isFile()) return { stream: createReadStream(file, { highWaterMark: 1 << 20 }), size: stat.size }
  if (!stat.isFIFO() && !stat.isCharacterDevice()) throw new CliError(`${file}: is not a file or a pipe`)
  // A named pipe (`<(…)`, mkfifo) or a terminal (/dev/stdin) is read on the event loop, as stdin
  // is, to its end. A read by the thread pool waiting for a writer that sends nothing more would
  // hold the process's exit after a bad line or a signal. (The open may wait for the writer.)
  const fd = await openAsync(file, 'r')
  if (isatty(fd)) return { stream: new ReadStream(fd), size: undefined }
  if (stat.isFIFO()) return { stream: new Socket({ fd, readable: true, writable: false }), size: undefined }
  return { stream: createReadStream('', { fd, highWaterMark: 1 << 20 }), size: undefined } // /dev/null and the like
}

/**
 * Loads every line, a batch per transaction. A bad line stops the import: the
 * batches before it stay loaded, nothing of its own batch is. Warns in one line when
 * the import leaves no id for new animals.
 * @returns how many animals were loaded
 */
async function importLines (store: Store, source: Source, batchSize: number): Promise<number> {
  const progress = startProgress('importing', source.size)
  let batch: Pet[] = []
  let batchStart = 1
  let lineNumber = 0
  let loaded = 0
  let lastIdTaken = false

  const loadedSoFar = (): string => loaded === 0 ? 'nothing was loaded' : `the ${loaded} animals of lines 1-${batchStart - 1} were loaded, nothing after`
  const refuse = (what: string, detail: string): CliError => new CliError(`${what}: ${detail}; ${loadedSoFar()}`)
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return
    const signal = await progress.stopSignal()
    if (signal !== undefined) throw stoppedBy(signal, loadedSoFar())
    try {
      await store.importPets(batch)
    } catch (err) {
      throw refuse(`lines ${batchStart}-${lineNumber}`, `cannot be loaded (${err instanceof StoreUnavailable ? describeFailure(err) : (err as Error).message})`)
    }
    loaded += batch.length
    batch = []
    batchStart = lineNumber + 1
    progress.update(source.stream.bytesRead ?? 0, loaded)
  }
  const tooLong = (): CliError => refuse(`line ${lineNumber}`, `must be at most ${LINE_LIMIT_BYTES} bytes`)
  const take = (bytes: Buffer): void => {
    lineNumber++
    if (bytes.length > LINE_LIMIT_BYTES) throw tooLong()
    try {
      // Strict, as the API decodes a body: invalid UTF-8 is refused, never stored as U+FFFD.
      const line = decodeUtf8(bytes)
      const text = line.endsWith('\r') ? line.slice(0, -1) : line
      if (text.trim() === '') return
      const pet = parsePetLine(text)
      if (pet.id === INT64_MAX) lastIdTaken = true
      batch.push(pet)
    } catch (err) {
      if (!(err instanceof MalformedJson || err instanceof InvalidPetLine)) throw err
      throw refuse(`line ${lineNumber}`, err.message.replace(/^body: /, ''))
    }
  }

  try {
    // Split as bytes: a newline byte is never inside a UTF-8 sequence, but a chunk's end may be.
    let rest: Buffer = Buffer.alloc(0)
    for await (const chunk of source.stream) {
      const bytes = rest.length === 0 ? chunk as Buffer : Buffer.concat([rest, chunk as Buffer])
      let start = 0
      for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
        take(bytes.subarray(start, end))
        start = end + 1
        if (batch.length >= batchSize) await flush()
      }
      rest = bytes.subarray(start)
      // A line past the limit is refused before the rest of it is read: no valid line comes near it.
      if (rest.length > LINE_LIMIT_BYTES) {
        lineNumber++
        throw tooLong()
      }
    }
    if (rest.length > 0) take(rest)
    await flush()
    if (loaded > 0) await store.analyze()
  } finally {
    progress.stop()
  }
  // Kept as given, for an exact copy; but new animals get ids above the highest, and none is.
  if (lastIdTaken) process.stderr.write(`petstore: warning: id ${INT64_MAX} was imported, the highest there is: no id is left for new animals (POST /v1/pets answers 503, seed fails)\n`)
  return loaded
}

export function registerImportCommand (program: Command): void {
  const command = program.command('import')
    .description('Load animals from a JSON Lines file (as `export` writes it), ids kept, in batched transactions.')
    .argument('<file>', 'the .jsonl file: one animal per line, {"id","name","categoryId","status"}; - reads stdin')
    .addOption(batchSizeOption())
    .addHelpText('after', '\nExample:\n  petstore export --database-url sqlite:./old.db | petstore import - --database-url sqlite:./new.db\n')
  addSettingFlags(command, ['databaseUrl']).action(async (file: string, options: { batchSize: string }) => {
    const batchSize = parseFlag('--batch-size', options.batchSize, integer(1, BATCH_SIZE_MAX))
    const source = await openSource(file)
    const started = performance.now()
    const loaded = await withStore(command, (store) => importLines(store, source, batchSize))
    reportDone('imported', loaded, started)
  })
}
