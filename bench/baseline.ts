/**
 * Another build of the service to measure beside this one (`--baseline COMMIT`):
 * a git worktree of that commit in a temporary directory, with this project's
 * node_modules when its lock file is the same (else its own, by `npm ci`), built
 * by its own `npm run build`. Every worktree made here is removed at the end.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runNpm } from './npm.js'

/** A built tree of another commit, ready to fill and start as the service is. */
export interface Baseline {
  /** The worktree: a project root like the service's, with its own dist/. */
  root: string
  /** The full commit hash. */
  commit: string
  /** Its subject line. */
  subject: string
  /** Its name in the report: `baseline (2f7e686)`. */
  target: string
}

function git (root: string, args: string[]): { ok: boolean, stdout: string, stderr: string } {
  const result = spawnSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 })
  return { ok: result.status === 0, stdout: result.stdout ?? '', stderr: result.stderr ?? String(result.error) }
}

/**
 * True when `commitish` names a commit of the repository at `root`.
 * @example isCommit(root, 'HEAD~1') // true
 */
export function isCommit (root: string, commitish: string): boolean {
  return git(root, ['rev-parse', '--verify', '--quiet', `${commitish}^{commit}`]).ok
}

// Worktrees made and not removed yet, each with the repository that made it.
const trees = new Map<string, string>()

/**
 * Removes every worktree `buildBaseline` made that is still there, failed builds included;
 * synchronous, so an interrupted bench can call it on its way out.
 * @example process.once('SIGINT', () => { removeBaselines(); process.exit(130) })
 */
export function removeBaselines (): void {
  for (const [dir, root] of trees) {
    if (!git(root, ['worktree', 'remove', '--force', dir]).ok) {
      // Half made (the add failed): the directory goes, then git forgets it.
      rmSync(dir, { recursive: true, force: true })
      git(root, ['worktree', 'prune'])
    }
    trees.delete(dir)
  }
}

/**
 * Checks `commitish` out in a temporary worktree, gives it node_modules and runs its
 * `npm run build`; `onStep` hears of each step. Call removeBaselines() at the end.
 * @throws Error when git, npm ci or the build fails
 * @example const baseline = await buildBaseline(root, 'HEAD~1', console.error) // baseline.target: 'baseline (2f7e686)'
 */
export async function buildBaseline (root: string, commitish: string, onStep: (message: string) => void): Promise<Baseline> {
  const commit = git(root, ['rev-parse', '--verify', `${commitish}^{commit}`]).stdout.trim()
  const short = git(root, ['rev-parse', '--short', commit]).stdout.trim()
  const subject = git(root, ['log', '-1', '--format=%s', commit]).stdout.trim()
  const dir = mkdtempSync(join(tmpdir(), 'petstore-baseline-'))
  trees.set(dir, root)
  onStep(`baseline: git worktree of ${short} in ${dir}`)
  const added = git(root, ['worktree', 'add', '--detach', dir, commit])
  if (!added.ok) throw new Error(`git worktree add ${short} failed: ${added.stderr.trim()}`)
  // The same lock file resolves the same dependencies: this project's node_modules serves both builds.
  const lock = git(root, ['show', `${commit}:package-lock.json`])
  if (lock.ok && lock.stdout === readFileSync(join(root, 'package-lock.json'), 'utf8')) {
    symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'), 'dir')
  } else {
    onStep(`baseline: its package-lock.json differs, npm ci in ${dir}`)
    await runNpm(dir, ['ci', '--no-audit', '--no-fund'])
  }
  onStep(`baseline: npm run build in ${dir}`)
  await runNpm(dir, ['run', '--silent', 'build'])
  return { root: dir, commit, subject, target: `baseline (${short})` }
}
