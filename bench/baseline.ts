/**
 * `--baseline COMMIT`: that commit's service, built by its own `npm run build` in a git worktree
 * of its own, to measure beside this one. The worktree goes at the end, whatever happened.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const trees = new Map<string, string>()

/** Runs `command` in `cwd`; its stdout, trimmed; throws its output if it fails. */
export function run (cwd: string, command: string, args: string[]): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 256 * 2 ** 20 })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${result.stdout}${result.stderr}`)
  }
  return result.stdout.trim()
}

/** The short commit at `root`, and whether the service's sources differ from it. */
export function commitOf (root: string): string {
  const changed = run(root, 'git', ['status', '--porcelain', '--', 'src', 'package.json']) !== ''
  return run(root, 'git', ['rev-parse', '--short', 'HEAD']) + (changed ? ' (with changes)' : '')
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
 * @example const { root, name } = buildBaseline(ROOT, '88e4a05', say) // name: 'baseline (88e4a05)'
 */
export function buildBaseline (root: string, commitish: string, say: (text: string) => void):
{ root: string, name: string, subject: string } {
  const git = (args: string[]): string => run(root, 'git', args)
  const commit = git(['rev-parse', '--verify', `${commitish}^{commit}`])
  const short = git(['rev-parse', '--short', commit])
  const dir = mkdtempSync(join(tmpdir(), 'petstore-baseline-'))
  trees.set(dir, root)
  say(`baseline: git worktree of ${short} in ${dir}`)
  git(['worktree', 'add', '--detach', dir, commit])
  const old = JSON.parse(git(['show', `${commit}:package-lock.json`])) as Lock
  if (sameRuntime(old, JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Lock)) {
    symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'), 'dir')
  } else {
    say('baseline: its dependencies differ, npm ci')
    run(dir, 'npm', ['ci', '--no-audit', '--no-fund'])
  }
  say('baseline: npm run build')
  run(dir, 'npm', ['run', '--silent', 'build'])
  return { root: dir, name: `baseline (${short})`, subject: git(['log', '-1', '--format=%s', commit]) }
}

/** Removes every worktree buildBaseline made; synchronous, so an interrupted bench can call it on its way out. */
export function removeBaselines (): void {
  for (const [dir, root] of trees) {
    rmSync(dir, { recursive: true, force: true })
    spawnSync('git', ['worktree', 'prune'], { cwd: root })
    trees.delete(dir)
  }
}
