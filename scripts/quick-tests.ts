/**
 * The test files of `npm run test:quick` (scripts/test.sh --quick): every test file but those
 * that start a program (a process of the service or of the CLI, Chromium, Prometheus, nginx,
 * HAProxy, Patroni, podman, the bench). A file starts one when esbuild's bundle of it carries code
 * of a module that imports node:child_process or playwright-core. Run as a script with the test
 * files as arguments: the quick ones on stdout, one a line, and on stderr one line naming what
 * is left out.
 */
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/** The imports through which a module starts a program. */
const STARTS_A_PROGRAM = new Set(['node:child_process', 'playwright-core'])
/** Quick though it asks `chromium --version`: its lines name the legs (PostgreSQL, Redis…) a run leaves out. */
const LEGS = 'test/legs.test.ts'

export interface QuickSplit {
  /** The files of the quick loop, by name. */
  quick: string[]
  /** Each file left out, with the modules of its bundle that start a program. */
  leftOut: Map<string, string[]>
}

/**
 * Splits test files (paths from the repository's root, where this runs) into the quick loop's and the rest.
 * @example const { quick, leftOut } = await splitQuickTests(['test/http/list-pets.test.ts', 'test/process/workers.test.ts'])
 */
export async function splitQuickTests (files: string[]): Promise<QuickSplit> {
  const { metafile } = await build({
    entryPoints: files,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outdir: 'quick-tests',
    outbase: '.',
    write: false,
    metafile: true,
    logLevel: 'warning'
  })
  const starters = new Set(Object.entries(metafile.inputs)
    .filter(([, input]) => input.imports.some((imported) => imported.external === true && STARTS_A_PROGRAM.has(imported.path)))
    .map(([path]) => path))
  const split: QuickSplit = { quick: [], leftOut: new Map() }
  for (const output of Object.values(metafile.outputs)) {
    if (output.entryPoint === undefined) continue
    // A module whose exports the file does not use is shaken out of its bundle (0 bytes): it runs nothing.
    const starting = Object.entries(output.inputs).filter(([path, input]) => starters.has(path) && input.bytesInOutput > 0).map(([path]) => path)
    if (starting.length === 0 || output.entryPoint === LEGS) split.quick.push(output.entryPoint)
    else split.leftOut.set(output.entryPoint, starting)
  }
  split.quick.sort()
  return split
}

/**
 * The one line a quick run prints: how many files it leaves out, and through which modules they start a program.
 * @example console.error(leftOutLine(split))
 */
export function leftOutLine ({ leftOut }: QuickSplit): string {
  const through = new Set([...leftOut].flatMap(([file, modules]) => modules.filter((module) => module !== file).map((module) => basename(module, '.ts'))))
  const themselves = [...leftOut].some(([file, modules]) => modules.includes(file))
  return `test:quick leaves out the ${leftOut.size} test files that start a program, through ${[...through].sort().join(', ')}${themselves ? ' or themselves' : ''}: npm test runs them`
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const split = await splitQuickTests(process.argv.slice(2))
  console.error(leftOutLine(split))
  console.log(split.quick.join('\n'))
}
