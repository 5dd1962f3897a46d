import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'bench/results/**'] }),
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
