/**
 * `--baseline COMMIT`: that commit's service, built by its own `npm run build` in a git worktree
 * of its own, to measure beside this one. The worktree goes at the end, whatever happened.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { say } from './flags.js'
import { ROOT, atEnd, run } from './targets.js'

/** The short commit of the bench's tree, and whether the service's sources differ from it. */
export function commitOf (): string {
  const changed = run(ROOT, 'git', ['status', '--porcelain', '--', 'src', 'package.json']) !== ''
  return run(ROOT, 'git', ['rev-parse', '--short', 'HEAD']) + (changed ? ' (with changes)' : '')
}

type Lock = { packages: Record<string, { version?: string, dev?: boolean }> }

/** True when every package the old lock installs for the service itself (and TypeScript) has the same version here. */
function sameRuntime (old: Lock, ours: Lock): boolean {
  return Object.entries(old.packages).every(([path, entry]) => path === '' ||
    (entry.dev === true && path !== 'node_modules/typescript') || ours.packages[path]?.version === entry.version)
}

/**
 * Checks `commitish` out in a temporary worktree, gives it node_modules (this project's when its
 * runtime dependencies are the same, else `npm ci`) and runs its `npm run build`.
 * @example const { root, name } = buildBaseline('88e4a05') // name: 'baseline (88e4a05)'
 */
export function buildBaseline (commitish: string): { root: string, name: string, subject: string } {
  const git = (args: string[]): string => run(ROOT, 'git', args)
  const commit = git(['rev-parse', '--verify', `${commitish}^{commit}`])
  const short = git(['rev-parse', '--short', commit])
  const dir = mkdtempSync(join(tmpdir(), 'petstore-baseline-'))
  atEnd(async () => {
    rmSync(dir, { recursive: true, force: true })
    git(['worktree', 'prune'])
  })
  say(`baseline: git worktree of ${short} in ${dir}`)
  git(['worktree', 'add', '--detach', dir, commit])
  const old = JSON.parse(git(['show', `${commit}:package-lock.json`])) as Lock
  if (sameRuntime(old, JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock)) {
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'), 'dir')
  } else {
    say('baseline: its dependencies differ, npm ci')
    run(dir, 'npm', ['ci', '--no-audit', '--no-fund'])
  }
  say('baseline: npm run build')
  run(dir, 'npm', ['run', '--silent', 'build'])
  return { root: dir, name: `baseline (${short})`, subject: git(['log', '-1', '--format=%s', commit]) }
}
