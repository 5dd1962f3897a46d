/**
 * Debian's Prometheus tools (`promtool`, `prometheus`) for the ops kit's tests: found on the PATH,
 * or one skip line; in CI (`CI=true`) a missing tool fails instead, since .ci/run installs it.
 */
import { execFileSync } from 'node:child_process'

/** The tool's path, or undefined after printing why its tests are skipped; throws in CI. */
export function findTool (name: 'promtool' | 'prometheus', what: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim()
  } catch {
    if (process.env.CI === 'true') throw new Error(`${name} is missing, and CI=true: .ci/run installs Debian's prometheus package`)
    console.log(`${what} skipped: ${name} is not installed (apt-get install prometheus)`)
    return undefined
  }
}
