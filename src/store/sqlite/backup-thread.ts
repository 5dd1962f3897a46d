/**
 * The backup thread: `VACUUM INTO` the temporary file on a connection of its own, so the
 * calling thread keeps drawing progress (and a server keeps serving) while SQLite copies.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { openConnection } from './connection.js'

export type BackupAnswer = { done: true } | { done: false, message: string, code: unknown }

const { source, target } = workerData as { source: string, target: string }
let answer: BackupAnswer
try {
  const db = openConnection(source)
  try {
    db.prepare('VACUUM INTO ?').run(target)
  } finally {
    db.close()
  }
  answer = { done: true }
} catch (err) {
  const { message, code } = err as { message: string, code?: unknown }
  answer = { done: false, message, code }
}
parentPort!.postMessage(answer)
