import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'

// What runs the process (src/process/, and app.ts and config.ts above the layers); no layer imports them.
const PROCESS_MODULES = '^(\\.\\./)+(process/|(app|config)\\.js$)'

/** Imports only run down: http -> domain -> store -> schemas (STYLE.md, habit 21). */
function importsOnlyDown (files, forbidden, message) {
  return {
    files,
    rules: {
      'no-restricted-imports': ['error', { patterns: forbidden.map((regex) => ({ regex, message })) }]
    }
  }
}

export default [
  // The client's generated sources are written by openapi-typescript and JSON.stringify, not by hand.
  ...neostandard({ ts: true, ignores: [...resolveIgnoresFromGitignore(), 'packages/client/src/generated/**'] }),
  {
    rules: {
      // `void promise` marks a promise deliberately not awaited (its errors are handled inside).
      'no-void': ['error', { allowAsStatement: true }]
    }
  },
  {
    files: ['src/schemas/**'],
    rules: {
      // A TypeBox schema and its static type share one name: `const Pet = Type.Object(…)`, `type Pet = Static<typeof Pet>`.
      '@typescript-eslint/no-redeclare': 'off'
    }
  },
  importsOnlyDown(['src/schemas/**'], ['^\\.\\./'], 'src/schemas is the bottom layer: it imports nothing of ours outside it.'),
  importsOnlyDown(['src/store/**'], ['(^|/)(domain|http|cli)/', PROCESS_MODULES], 'src/store imports only src/schemas: imports run http -> domain -> store -> schemas.'),
  importsOnlyDown(['src/domain/**'], ['(^|/)(http|cli)/', PROCESS_MODULES], 'src/domain imports only src/store and src/schemas: imports run http -> domain -> store -> schemas.'),
  importsOnlyDown(['src/http/**'], ['(^|/)cli/', PROCESS_MODULES], 'src/http is built by src/app.ts, never the other way round.'),
  importsOnlyDown(['src/cli/**'], ['(^|/)http/'], 'The CLI speaks to the domain and the store, never to the HTTP layer\'s internals.'),
  {
    files: ['packages/client/test/**'],
    ignores: ['packages/client/test/server-support.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+test/', message: 'The client\'s tests reach the server\'s test support through packages/client/test/server-support.ts only.' }] }]
    }
  }
]
