/**
 * The bench's command line: its flags, read by name (`--name value` or `--name` alone; a bad value is one line and
 * exit code 2), and its progress, line by line on stderr.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

/** A line of progress on stderr, after the seconds since the bench began. */
export function say (text: string): void {
  process.stderr.write(`bench ${String(Math.round(performance.now() / 1000)).padStart(4)} s: ${text}\n`)
}

export const positive = (value: number): boolean => value > 0
export const count = (value: number): boolean => Number.isInteger(value) && value > 0

/** The flags table under `heading` in bench/README.md: the usage, written once. */
export function usage (heading: string): string {
  const readme = readFileSync('bench/README.md', 'utf8')
  const section = readme.slice(readme.indexOf(`\n${heading}\n`) + 1).split('\n## ')[0]!
  const rows = section.split('\n').filter((line) => line.startsWith('| `--'))
  return `Usage (bench/README.md, ${heading.slice(3)}):\n${rows.join('\n')}\n`
}

/** Reads `strings` (`--name value`) and `booleans` (`--name`); `--help` prints the usage of the README's `heading`. */
export function readFlags (argv: string[], strings: string[], booleans: string[], heading: string) {
  const options = Object.fromEntries([...strings.map((name) => [name, { type: 'string' as const }]),
    ...[...booleans, 'help'].map((name) => [name, { type: 'boolean' as const }])])
  const { values } = parseArgs({ args: argv, options }) as { values: Record<string, string | boolean | undefined> }
  if (values.help === true) {
    process.stdout.write(usage(heading))
    process.exit(0)
  }
  const text = (name: string): string | undefined => values[name] as string | undefined
  /** Numbers, comma-separated; each must pass `check` (`what` says how). */
  const numbers = (name: string, fallback: number[], check: (value: number) => boolean, what: string): number[] => {
    const picked = text(name)?.split(',').map(Number) ?? fallback
    if (!picked.every(check)) throw new Error(`--${name}: must be ${what}`)
    return picked
  }
  return {
    text,
    given: (name: string): boolean => values[name] === true,
    numbers,
    number: (name: string, fallback: number, check: (value: number) => boolean, what: string): number =>
      numbers(name, [fallback], check, what)[0]!,
    /** Names among `among`, comma-separated, in `among`'s order; all of them when not given. */
    list: <T extends string>(name: string, among: readonly T[]): T[] => {
      const picked = text(name)?.split(',') ?? among
      const unknown = picked.find((value) => !(among as readonly string[]).includes(value))
      if (unknown !== undefined) throw new Error(`--${name}: ${unknown} is not one of ${among.join(', ')}`)
      return among.filter((value) => picked.includes(value))
    },
    /** `--postgres`, else TEST_DATABASE_URL. */
    postgres: text('postgres') ?? (process.env.TEST_DATABASE_URL || undefined)
  }
}
