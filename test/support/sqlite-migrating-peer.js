/**
 * Plain JavaScript on the built dist/, as every process a test starts (npm test builds it first).
 * Another process in the middle of migrating the SQLite file at argv[2]: it takes
 * the write lock, applies every migration, prints "migrating", holds the lock
 * for argv[3] ms, then commits. A test migrates at the same moment from its side.
 */
import Database from 'better-sqlite3'
import { MIGRATIONS } from '../../dist/store/sqlite/migrations.js'

const [path, holdMs] = process.argv.slice(2)
const db = new Database(path, { timeout: 5000 })
db.pragma('journal_mode = WAL')
db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)')
db.exec('BEGIN IMMEDIATE')
for (const migration of MIGRATIONS) {
  db.exec(migration.sql)
  db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, new Date().toISOString())
}
process.stdout.write('migrating\n')
setTimeout(() => {
  db.exec('COMMIT')
  db.close()
}, Number(holdMs))
