/**
 * Exact int64 values as plain JavaScript: the highest, the canonical form (a number when it is
 * safe, else a bigint) and the one parse of int64 text. No TypeBox here: the SQLite writer and
 * backup threads load this, and TypeBox's 200 modules, which only schemas need, would load with it.
 */
export const INT64_MAX = 9223372036854775807n

/**
 * An int64 in canonical form: a number when it is a safe integer, else a bigint,
 * so that equal values are always `===`.
 */
export type Int64 = number | bigint

/** @example toInt64(9007199254740993n) // 9007199254740993n; toInt64(42n) // 42 */
export function toInt64 (value: bigint): Int64 {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
    ? Number(value)
    : value
}

/**
 * Decimal digits (an optional minus first) as an Int64: the one parse of int64 text in the
 * server, for query and path digits, exact JSON numbers, database text and import lines.
 * @example parseInt64('9007199254740993') // 9007199254740993n; parseInt64('42') // 42
 */
export function parseInt64 (digits: string): Int64 {
  // Fifteen characters are below 2^53 even all digits: Number reads them exactly, and no BigInt is made.
  return digits.length <= 15 ? Number(digits) : toInt64(BigInt(digits))
}
