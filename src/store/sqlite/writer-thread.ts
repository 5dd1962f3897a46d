/**
 * The writer thread: runs the group-commit transactions on its own connection, so
 * the request thread keeps parsing and answering requests while a commit waits for
 * its fsync.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { openConnection, retryWhileBusy, statementCache } from './connection.js'
import { prepareCreatePets } from './create-pets.js'
import type { WriterAnswer, WriterMessage } from './writer.js'

// SQLite's own wait for a lock held by another process backs off to sleeps of 25 to 100 ms,
// while a batch's commit takes a few: this thread asks again every millisecond instead.
const db = openConnection((workerData as { path: string }).path, 0)
const createPets = prepareCreatePets(db, statementCache(db))
const port = parentPort!

port.on('message', (message: WriterMessage) => {
  if (message.type === 'close') {
    db.close()
    port.close()
    return
  }
  let answer: WriterAnswer
  try {
    answer = { id: message.id, results: retryWhileBusy(() => createPets(message.requests), 1) }
  } catch (err) {
    // The class name (NoIdLeft) and SqliteError's code (SQLITE_BUSY, …) cross the thread
    // boundary; the request thread rebuilds the error and classifies it.
    const { name, message: text, code } = err as { name: string, message: string, code?: unknown }
    answer = { id: message.id, error: { name, message: text, code } }
  }
  port.postMessage(answer)
})
