/**
 * The online backup of the SQLite file: `VACUUM INTO` a temporary file beside the target
 * (one read transaction, so a consistent snapshot that never restarts under writes, unlike the
 * backup API, which starts over whenever another connection writes), checked there, fsynced,
 * renamed over the target, then recorded in the `backups` table.
 */
import { once } from 'node:events'
import { rmSync } from 'node:fs'
import { open, rename, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import Database from 'better-sqlite3'
import type { BackupOptions, BackupRecord } from '../store.js'
import { BackupFailed } from '../store-errors.js'
import type { BackupAnswer } from './backup-thread.js'
import type { Statements } from './connection.js'
import { startThread } from './thread.js'

const PROGRESS_EVERY_MS = 200

// What a failed write's code means to the operator, Node's and SQLite's alike.
const REASONS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  SQLITE_FULL: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOENT: 'no such folder',
  ENOTDIR: 'no such folder',
  EISDIR: 'it is a folder',
  SQLITE_CANTOPEN: 'the file cannot be created'
}

function failure (err: unknown, target: string): Error {
  if (err instanceof BackupFailed) return err
  const { code, message } = err as { code?: unknown, message?: string }
  const reason = typeof code === 'string' ? REASONS[code] ?? `${message ?? code} (${code})` : undefined
  return reason === undefined ? err as Error : new BackupFailed(`cannot back up to ${target}: ${reason}`, { cause: err })
}

async function fsync (path: string): Promise<void> {
  const handle = await open(path, 'r')
  try { await handle.sync() } finally { await handle.close() }
}

/** Copies `source` into the empty file `temp` on the backup thread, reporting its growth. */
async function vacuumInto (source: string, temp: string, totalBytes: number, onProgress: BackupOptions['onProgress']): Promise<void> {
  const thread = startThread('backup-thread', { source, target: temp })
  const timer = setInterval(() => {
    stat(temp).then(({ size }) => onProgress?.(Math.min(size, totalBytes), totalBytes), () => {})
  }, PROGRESS_EVERY_MS)
  try {
    const [answer] = await once(thread, 'message') as [BackupAnswer]
    if (!answer.done) throw Object.assign(new Error(answer.message), { code: answer.code })
  } finally {
    clearInterval(timer)
  }
  onProgress?.(totalBytes, totalBytes)
}

/** Opens the copy and checks it: intact, at the source's schema version, holding at least `animals`. */
function verify (path: string, version: number, animals: number): number {
  const copy = new Database(path, { fileMustExist: true })
  try {
    const problems = copy.pragma('integrity_check', { simple: true })
    if (problems !== 'ok') throw new BackupFailed(`the copy failed its integrity check: ${String(problems)}`)
    const copied = copy.prepare('SELECT max(version) FROM schema_migrations').pluck().get() as number
    if (copied !== version) throw new BackupFailed(`the copy is at migration ${copied}, the database at ${version}`)
    const counted = copy.prepare('SELECT count(*) FROM pets').pluck().get() as number
    // Animals are never deleted: those counted before the copy began must all be in it.
    if (counted < animals) throw new BackupFailed(`the copy holds ${counted} animals, fewer than the ${animals} before it began`)
    return counted
  } finally {
    copy.close()
  }
}

/**
 * Writes a checked copy of the database at `source` to `target`, replacing it, and records it.
 * A failure leaves neither `target` changed nor a temporary file.
 * @throws BackupFailed with one line, when the copy cannot be written or fails its check
 * @example await backupDatabase(db, sql, '/var/lib/petstore/petstore.db', '/backup/petstore.db')
 */
export async function backupDatabase (db: Database.Database, sql: Statements, source: string, target: string, { onProgress, signal }: BackupOptions = {}): Promise<BackupRecord> {
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`)
  const version = Number(sql('SELECT max(version) FROM schema_migrations').pluck().get())
  const before = Number(sql('SELECT count(*) FROM pets').pluck().get())
  const pageSize = Number(db.pragma('page_size', { simple: true }))
  const usedPages = Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }))
  const takenAt = new Date()
  // Even a second Ctrl-C (an exit without waiting) leaves no temporary file behind.
  const removeTemp = (): void => { rmSync(temp, { force: true }) }
  let tempMade = false
  try {
    // VACUUM INTO accepts an empty file; making it here reports an unwritable folder at once.
    await writeFile(temp, '', { flag: 'wx' })
    tempMade = true
    process.once('exit', removeTemp)
    await vacuumInto(source, temp, usedPages * pageSize, onProgress)
    signal?.throwIfAborted()
    const animals = verify(temp, version, before)
    signal?.throwIfAborted()
    await fsync(temp)
    await rename(temp, target)
    tempMade = false
    // The rename itself is durable once the folder is synced.
    await fsync(dirname(target))
    const { size: bytes } = await stat(target)
    sql('INSERT INTO backups (taken_at, file, bytes, animals) VALUES (?, ?, ?, ?)').run(takenAt.toISOString(), target, bytes, animals)
    return { takenAt, file: target, bytes, animals }
  } catch (err) {
    throw signal?.aborted === true ? err : failure(err, target)
  } finally {
    process.off('exit', removeTemp)
    if (tempMade) removeTemp()
  }
}
