/**
 * Peer: bare node:http and better-sqlite3, no auth. Its own SQLite file in WAL mode
 * with synchronous=FULL (every 201 durable, as the service's), the same table and index as
 * the service's, filled with the same animals at start. Concurrent creates wait in one
 * queue, flushed in one transaction at 64 rows or after 1 ms: group commit on the main
 * thread, where the service commits on a writer thread. Requests are handled by the
 * ceiling's apiHandler, so only the storage differs from the ceiling.
 *
 * Run as a process of its own: PORT, BENCH_DB (a file, made when missing) and BENCH_ANIMALS
 * in the environment; it answers GET /readyz once it listens.
 */
import { createServer, type RequestListener, type ServerResponse } from 'node:http'
import Database from 'better-sqlite3'
import { generateAnimals, type Animal } from '../animals.js'
import { apiHandler, fail, isMain, sendCreated, sendPage, sendPet, serveUntilTerminated, type NewAnimal } from '../ceiling.js'

const FLUSH_ROWS = 64
const FLUSH_MS = 1
const COLUMNS = 'id, name, category_id AS categoryId, status'

/**
 * The peer's request handler on the SQLite file at `path`, filled with animals 1..animals when new.
 * @example const { listener, close } = sqlitePeer('/tmp/peer.db', 10_000)
 */
export function sqlitePeer (path: string, animals: number): { listener: RequestListener, close: () => void } {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec(`CREATE TABLE IF NOT EXISTS pets (
      id INTEGER PRIMARY KEY, name TEXT NOT NULL, category_id INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold')));
    CREATE INDEX IF NOT EXISTS pets_status_id ON pets (status, id)`)
  if ((db.prepare('SELECT count(*) AS n FROM pets').get() as { n: number }).n === 0) {
    const insert = db.prepare('INSERT INTO pets (id, name, category_id, status) VALUES (@id, @name, @categoryId, @status)')
    db.transaction(() => { for (const animal of generateAnimals(animals)) insert.run(animal) })()
  }
  const list = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE id > ? ORDER BY id LIMIT ?`)
  const listByStatus = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`)
  const find = db.prepare(`SELECT ${COLUMNS} FROM pets WHERE id = ?`)
  const insert = db.prepare(`INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING ${COLUMNS}`)

  let queue: Array<{ fields: NewAnimal, res: ServerResponse, origin: string }> = []
  let timer: NodeJS.Timeout | undefined
  const insertAll = db.transaction((batch: typeof queue) => batch.map(({ fields }) => insert.get(fields.name, fields.categoryId, fields.status) as Animal))
  function flush (): void {
    clearTimeout(timer)
    timer = undefined
    const batch = queue
    queue = []
    let created: Animal[]
    try {
      created = insertAll(batch)
    } catch (err) {
      for (const { res } of batch) fail(res, 503, 'unavailable', `the database failed: ${(err as Error).message}`)
      return
    }
    batch.forEach(({ res, origin }, index) => sendCreated(res, created[index]!, origin))
  }

  const listener = apiHandler({
    listPets: (res, query, origin) => {
      // One row more than the page tells whether a next page exists.
      const rows = (query.status === undefined
        ? list.all(query.afterId, query.limit + 1)
        : listByStatus.all(query.status, query.afterId, query.limit + 1)) as Animal[]
      sendPage(res, rows.slice(0, query.limit), rows.length > query.limit, query, origin)
    },
    getPet: (res, id) => sendPet(res, find.get(id) as Animal | undefined, id),
    createPet: (res, fields, origin) => {
      queue.push({ fields, res, origin })
      if (queue.length >= FLUSH_ROWS) flush()
      else timer ??= setTimeout(flush, FLUSH_MS)
    }
  }, undefined)
  return { listener, close: () => { if (queue.length > 0) flush(); db.close() } }
}

// Started as a process (`node http-sqlite.js`), not when imported.
if (isMain(import.meta.url)) {
  const { listener, close } = sqlitePeer(process.env.BENCH_DB ?? 'peer.db', Number(process.env.BENCH_ANIMALS ?? '10000'))
  serveUntilTerminated(createServer(listener), async () => { close() })
}
