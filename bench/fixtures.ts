/**
 * The data the targets start from: a SQLite database filled by the service's
 * own CLI (`petstore import`, or `petstore seed` for the large sizes), a
 * json-server db.json with the same animals, and paging cursors deep inside a
 * database, made by the service's own codec.
 */
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, copyFileSync, existsSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CursorCodec } from '../src/domain/cursor.js'
import { openStore } from '../src/store/open-store.js'
import { generateAnimals, writeAnimalLines } from './animals.js'
import { seededRandom } from './seeded-random.js'

async function runCli (root: string, args: string[]): Promise<number> {
  const started = performance.now()
  const child = spawn(process.execPath, [join(root, 'dist/cli/main.js'), ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', resolve)
  })
  if (code !== 0) throw new Error(`petstore ${args[0]!} failed (exit ${code}): ${stderr.trim()}`)
  return (performance.now() - started) / 1000
}

/**
 * True when the built CLI has `petstore seed`.
 * @example if (!hasSeedCommand(root)) console.log('loading by import instead')
 */
export function hasSeedCommand (root: string): boolean {
  // `petstore seed --help` would exit 0 without the command too (commander shows the main help).
  const help = spawnSync(process.execPath, [join(root, 'dist/cli/main.js'), '--help'], { cwd: root, encoding: 'utf8' })
  return /^\s+seed\b/m.test(help.stdout)
}

/**
 * Fills a new database (`sqlite:PATH` or `postgres://…`) with animals 1..count through
 * `petstore import` (bench/animals.ts's animals).
 * @returns the seconds the import took
 */
export async function importAnimals (root: string, databaseUrl: string, count: number, workDir: string): Promise<number> {
  const lines = join(workDir, `animals-${count}.jsonl`)
  await writeAnimalLines(lines, count)
  try {
    return await runCli(root, ['import', lines, '--database-url', databaseUrl])
  } finally {
    rmSync(lines, { force: true })
  }
}

/**
 * Fills a new database with `count` generated animals through `petstore seed`.
 * @returns the seconds the seed took
 */
export async function seedAnimals (root: string, databasePath: string, count: number): Promise<number> {
  return await runCli(root, ['seed', '--count', String(count), '--database-url', `sqlite:${databasePath}`])
}

/**
 * A fresh copy of a database file (and its write-ahead log, if one was left), so
 * the creates of one run never reach the next.
 * @example copyDatabase(seeded, join(dir, 'run-3.db'))
 */
export function copyDatabase (from: string, to: string): void {
  for (const suffix of ['-wal', '-shm']) rmSync(`${to}${suffix}`, { force: true })
  copyFileSync(from, to)
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`)
}

/**
 * Reads a database file (and its write-ahead log) once, so its pages are in the OS page
 * cache, as they are on a server that has been answering for a while. This machine's host
 * reclaims page cache it deems cold: right after `petstore seed` of 10 M animals, 204 MB of
 * the 478 MB file were cached, and a random get then waits for the disk.
 * @example warmPageCache(join(dir, 'scale-10000000.db'))
 */
export function warmPageCache (path: string): void {
  const chunk = Buffer.allocUnsafe(1 << 20)
  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue
    const fd = openSync(file, 'r')
    try {
      while (readSync(fd, chunk) > 0);
    } finally {
      closeSync(fd)
    }
  }
}

/**
 * json-server's database: `{"pets":[…]}` with animals 1..count.
 * @example writeJsonServerDb(join(dir, 'db.json'), 10_000)
 */
export function writeJsonServerDb (path: string, count: number): void {
  writeFileSync(path, JSON.stringify({ pets: generateAnimals(count) }))
}

/**
 * `count` cursors for pages that start at random positions in the deeper half of a
 * database of `animals` (ids 1..animals), signed with that database's own secret.
 * @example await deepCursors('/tmp/bench/1000000.db', 1_000_000, 1000)
 */
export async function deepCursors (databasePath: string, animals: number, count: number): Promise<string[]> {
  const store = await openStore(`sqlite:${databasePath}`)
  try {
    const codec = new CursorCodec(await store.secret('cursor'))
    const random = seededRandom(7)
    const half = Math.floor(animals / 2)
    // Up to 100 from the end, so each page is a full one.
    const span = Math.max(1, animals - half - 100)
    return Array.from({ length: count }, () => codec.encode({ afterId: half + Math.floor(random() * span), status: undefined }))
  } finally {
    await store.close()
  }
}
