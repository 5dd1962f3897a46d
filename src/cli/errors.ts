import { ConfigError } from '../config.js'
import { MalformedJson } from '../schemas/json-reader.js'
import { BackupFailed, driverReason, NoIdLeft, StoreUnavailable } from '../store/store-errors.js'
import { InvalidPetLine } from './pet-lines.js'

/** One line for the operator, never a stack trace; exit code 1 unless another is given. */
export class CliError extends Error {
  override name = 'CliError'
  readonly exitCode: number

  constructor (message: string, options: ErrorOptions & { exitCode?: number } = {}) {
    super(message, options)
    this.exitCode = options.exitCode ?? 1
  }
}

/** A system call's failure (ENOSPC, EACCES…): the surroundings, not the program. */
function isSystemError (err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string'
}

/**
 * True for a failure of the program itself: neither bad input nor its surroundings
 * (the database, the disk, the output).
 */
export function isBug (err: unknown): boolean {
  return !(err instanceof CliError || err instanceof ConfigError || err instanceof StoreUnavailable || err instanceof NoIdLeft ||
    err instanceof BackupFailed ||
    err instanceof MalformedJson || err instanceof InvalidPetLine || isSystemError(err))
}

/**
 * What failed and why, in one line for the operator; the database's own words when it failed.
 * @example describeFailure(err) // 'the database is unavailable: database is locked'
 */
export function describeFailure (err: unknown): string {
  if (err instanceof StoreUnavailable && err.cause !== undefined) return `the database is unavailable: ${driverReason(err)}`
  if (isBug(err)) return `unexpected error: ${String(err)}`
  return (err as Error).message
}
