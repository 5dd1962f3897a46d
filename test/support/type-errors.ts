/**
 * Type-checks a TypeScript file as an app would, strictly, with the DOM library and no
 * Node types: a test's way to show that generated or shipped types refuse what the API refuses.
 */
import ts from 'typescript'

/**
 * The file's type errors; an unused `@ts-expect-error` counts as one.
 * @example assert.deepEqual(typeErrors(join(dir, 'program.ts')), [])
 */
export function typeErrors (file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: []
  })
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}
