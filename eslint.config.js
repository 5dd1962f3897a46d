import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'

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
  }
]
