/** One line for the operator, never a stack trace; exit code 1. */
export class CliError extends Error {
  override name = 'CliError'
}
