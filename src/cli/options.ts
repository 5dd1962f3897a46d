import { Option, type Command } from 'commander'
import { SETTINGS, parseConfig, parseSettings, type Config, type SettingKey, type Settings } from '../config.js'
import { BrokenRule } from '../schemas/operator-values.js'
import { CliError } from './errors.js'

export const BATCH_SIZE_MAX = 100_000
const BATCH_SIZE_DEFAULT = 10_000

/** Adds a flag per setting (`--port`, `--database-url`, …), each with its variable and default in the help. */
export function addSettingFlags (command: Command, only?: ReadonlyArray<keyof Config>): Command {
  for (const setting of SETTINGS) {
    if (only !== undefined && !only.includes(setting.key)) continue
    const defaultText = setting.default === '' ? '' : `, default ${setting.default}`
    command.addOption(new Option(`--${setting.flag} <value>`, `${setting.help} (env ${setting.env}${defaultText})`))
  }
  return command
}

/**
 * `--batch-size <n>`, animals per transaction, for the commands that load many.
 * @example command.addOption(batchSizeOption())
 */
export function batchSizeOption (): Option {
  return new Option('--batch-size <n>', `animals per transaction (1 to ${BATCH_SIZE_MAX})`).default(String(BATCH_SIZE_DEFAULT))
}

/**
 * A flag's value by its rule (src/schemas/operator-values.ts); a broken rule is the one-line error naming the flag.
 * @example parseFlag('--count', '1000', integer(1, 100_000_000)) // 1000
 */
export function parseFlag<T> (flag: string, raw: string, parse: (raw: string) => T): T {
  try {
    return parse(raw)
  } catch (rule) {
    if (rule instanceof BrokenRule) throw new CliError(`${flag}: ${rule.message}`)
    throw rule
  }
}

/**
 * The settings `keys` from the command's flags and the environment; no others are read, so a
 * variable meant for the server never stops another command.
 * @example const { databaseUrl } = settingsFrom(command, ['databaseUrl'])
 */
export function settingsFrom<K extends SettingKey> (command: Command, keys: readonly K[]): Settings<K> {
  return parseSettings(keys, process.env, flagsOf(command))
}

/** Every setting, from the command's flags and the environment: what `serve` runs on. */
export function configFrom (command: Command): Config {
  return parseConfig(process.env, flagsOf(command))
}

function flagsOf (command: Command): Record<string, string> {
  const flags: Record<string, string> = {}
  const values = command.opts<Record<string, string | undefined>>()
  for (const setting of SETTINGS) {
    const value = values[camelCase(setting.flag)]
    if (value !== undefined) flags[setting.flag] = value
  }
  return flags
}

function camelCase (flag: string): string {
  return flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase())
}
