/**
 * Another process's write lock on a SQLite file, as a second writer holds it.
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'

/**
 * Takes the write lock (`BEGIN IMMEDIATE`) once a seed or an import has committed a batch to
 * `file`: its next batch waits the busy timeout, then fails. ROLLBACK and close it after.
 * @example const lock = await lockOnceLoading(file); …; lock.exec('ROLLBACK'); lock.close()
 */
export async function lockOnceLoading (file: string, timeoutMs = 10_000): Promise<Database.Database> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    await sleep(20)
    if (!existsSync(file)) continue
    const db = new Database(file, { timeout: 5000 })
    try {
      if ((db.prepare('SELECT count(*) AS n FROM pets').get() as { n: number }).n > 0) {
        db.exec('BEGIN IMMEDIATE')
        return db
      }
    } catch {} // no table yet: still migrating
    db.close()
  }
  throw new Error(`${file}: no batch committed within ${timeoutMs} ms`)
}
