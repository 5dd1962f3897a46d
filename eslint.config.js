import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: resolveIgnoresFromGitignore() }),
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
