/** The bench's command line: flags by name (bench/README.md lists them; a bad one: one line, exit code 2), progress. */
import { parseArgs } from 'node:util'

/** A line of progress on stderr, after the seconds since the bench began. */
export function say (text: string): void {
  process.stderr.write(`bench ${String(Math.round(performance.now() / 1000)).padStart(4)} s: ${text}\n`)
}

/** Reads `strings` (`--name value`) and `booleans` (`--name`). */
export function readFlags (argv: string[], strings: string[], booleans: string[] = []) {
  const options = Object.fromEntries([...strings.map((name) => [name, { type: 'string' as const }]),
    ...booleans.map((name) => [name, { type: 'boolean' as const }])])
  const { values } = parseArgs({ args: argv, options }) as { values: Record<string, string | boolean | undefined> }
  const text = (name: string): string | undefined => values[name] as string | undefined
  /** Positive numbers, comma-separated; whole ones when `whole`. */
  const numbers = (name: string, fallback: number[], whole = false): number[] => {
    const picked = text(name)?.split(',').map(Number) ?? fallback
    if (picked.some((value) => !(value > 0) || (whole && !Number.isInteger(value)))) {
      throw new Error(`--${name}: must be positive${whole ? ' and whole' : ''}`)
    }
    return picked
  }
  return {
    text,
    given: (name: string): boolean => values[name] === true,
    numbers,
    number: (name: string, fallback: number, whole = false): number => numbers(name, [fallback], whole)[0]!,
    /** Names among `among`, comma-separated, in `among`'s order; all of them when not given. */
    list: <T extends string>(name: string, among: readonly T[]): T[] => {
      const picked = text(name)?.split(',') ?? among
      const unknown = picked.find((value) => !(among as readonly string[]).includes(value))
      if (unknown !== undefined) throw new Error(`--${name}: ${unknown} is not one of ${among.join(', ')}`)
      return among.filter((value) => picked.includes(value))
    },
    postgres: text('postgres') ?? (process.env.TEST_DATABASE_URL || undefined)
  }
}
