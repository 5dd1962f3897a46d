/**
 * The request thread's side of the writer thread (writer-thread.ts): sends it a
 * batch, resolves with the batch's outcomes once they are committed.
 */
import type { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import type { CreateResult } from '../store.js'
import { NoIdLeft, StoreUnavailable } from '../store-errors.js'
import type { CreateRequest } from './create-pets.js'
import { startThread } from './thread.js'

export type WriterMessage = { type: 'create', id: number, requests: CreateRequest[] } | { type: 'close' }
/** An error as it crosses the thread boundary: its class name and a driver's code. */
export interface WriterError { name: string, message: string, code: unknown }
export type WriterAnswer = { id: number, results: CreateResult[] } | { id: number, error: WriterError }

/** The error the writer thread reported, as the driver (or the id allocator) threw it. */
function rebuildError ({ name, message, code }: WriterError): Error {
  if (name === 'NoIdLeft') return new NoIdLeft(message)
  return typeof code === 'string' && code.startsWith('SQLITE_') ? new Database.SqliteError(message, code) : new Error(message)
}

export class SqliteWriter {
  readonly #path: string
  #worker: Worker | undefined
  readonly #pending = new Map<number, { resolve: (results: CreateResult[]) => void, reject: (err: unknown) => void }>()
  #nextId = 0
  #closed = false

  /**
   * The thread starts with the first create: an instance that only reads never carries
   * its memory (about 19 MB); that first create waits the few milliseconds of its start.
   * @example const writer = new SqliteWriter('/var/lib/petstore/petstore.db')
   */
  constructor (path: string) {
    this.#path = path
  }

  /** Commits a batch in the writer thread; refused once the store is closed. */
  async createPets (requests: CreateRequest[]): Promise<CreateResult[]> {
    if (this.#closed) throw new StoreUnavailable('the database is closed')
    const id = this.#nextId++
    const worker = this.#thread()
    // Only a batch in flight keeps the process alive: an idle writer never holds it open.
    if (this.#pending.size === 0) worker.ref()
    return await new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      worker.postMessage({ type: 'create', id, requests } satisfies WriterMessage)
    })
  }

  /** Lets the thread close its connection, and waits for it to end. */
  async close (): Promise<void> {
    this.#closed = true
    const worker = this.#worker
    if (worker === undefined) return
    const ended = new Promise((resolve) => worker.once('exit', resolve))
    worker.ref()
    worker.postMessage({ type: 'close' } satisfies WriterMessage)
    await ended
  }

  #thread (): Worker {
    if (this.#worker !== undefined) return this.#worker
    const worker = startThread('writer-thread', { path: this.#path })
    worker.unref()
    worker.on('message', (answer: WriterAnswer) => {
      const pending = this.#pending.get(answer.id)
      this.#pending.delete(answer.id)
      if (this.#pending.size === 0) worker.unref()
      if ('error' in answer) pending?.reject(rebuildError(answer.error))
      else pending?.resolve(answer.results)
    })
    // Should the thread ever die, no request waits for it: those in flight fail, the next call starts a new one.
    const fail = (): void => {
      this.#worker = undefined
      for (const { reject } of this.#pending.values()) reject(new StoreUnavailable('the writer thread stopped'))
      this.#pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', fail)
    this.#worker = worker
    return worker
  }
}
