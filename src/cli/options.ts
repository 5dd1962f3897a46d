import { Option, type Command } from 'commander'
import { SETTINGS, parseConfig, type Config } from '../config.js'

/** Adds a flag per setting (`--port`, `--database-url`, …), each with its variable and default in the help. */
export function addSettingFlags (command: Command, only?: ReadonlyArray<keyof Config>): Command {
  for (const setting of SETTINGS) {
    if (only !== undefined && !only.includes(setting.key)) continue
    const defaultText = setting.default === '' ? '' : `, default ${setting.default}`
    command.addOption(new Option(`--${setting.flag} <value>`, `${setting.help} (env ${setting.env}${defaultText})`))
  }
  return command
}

/** The config from the command's flags and the environment. */
export function configFrom (command: Command): Config {
  const flags: Record<string, string> = {}
  const values = command.opts<Record<string, string | undefined>>()
  for (const setting of SETTINGS) {
    const value = values[camelCase(setting.flag)]
    if (value !== undefined) flags[setting.flag] = value
  }
  return parseConfig(process.env, flags)
}

function camelCase (flag: string): string {
  return flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase())
}
