/**
 * HAProxy (Debian's package) for a test, in a folder the test owns: the test's sections, or
 * deploy/haproxy/petstore.cfg as an operator loads it, under a global section with an admin
 * socket, through which the test reads HAProxy's view of its servers and changes it
 * (`disable server api/one`) as an orchestrator would. Its output goes to `haproxy.log` there; it
 * is stopped by the test, or killed if the test file ends first.
 */
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT } from './constants.js'
import { ownChild, programMissing, stopChild } from './programs.js'

const HAPROXY = '/usr/sbin/haproxy'
/** The recipe of docs/deployment.md#haproxy, and the 503 it answers with. */
export const HAPROXY_RECIPE = join(ROOT, 'deploy/haproxy/petstore.cfg')
export const HAPROXY_REFUSAL = join(ROOT, 'deploy/haproxy/petstore-503.http')

export interface Haproxy {
  /** HAProxy's view of each server, `proxy/server` -> UP, DOWN, MAINT… (`show stat`). */
  status: () => Promise<Map<string, string>>
  /** One command of HAProxy's runtime API, e.g. `disable server api/one`; resolves with its answer. */
  command: (line: string) => Promise<string>
  /** SIGTERM, then SIGKILL after 5 s. */
  stop: () => Promise<void>
}

/** Why HAProxy cannot run here, or false when it can. */
export function haproxyMissing (): string | false {
  return programMissing(HAPROXY, 'haproxy')
}

/**
 * The recipe with its frontend bound to `port`, each backend's servers at `instances` (host:port,
 * the first server line's parameters kept, `track` naming the same instance) and its errorfile
 * read from this checkout.
 * @example recipeSections(8000, ['127.0.0.1:8001', '127.0.0.1:8002'])
 */
export function recipeSections (port: number, instances: string[]): string[][] {
  const recipe = readFileSync(HAPROXY_RECIPE, 'utf8')
  if (!/^ *server /m.test(recipe)) throw new Error('no server line in the recipe')
  const servers = (_: string, indent: string, parameters: string): string => instances.map((instance, n) =>
    `${indent}server instance${n + 1} ${instance}${parameters.replace(/\btrack (\S+)\/\S+/, `track $1/instance${n + 1}`)}\n`).join('')
  return [recipe
    .replace(/^( *)server \S+ \S+(.*)\n(?:\1server .*\n)*/gm, servers)
    .replace(/^( *)bind \S+$/m, `$1bind 127.0.0.1:${port}`)
    .replace(/^( *errorfile 503) \S+$/m, `$1 ${HAPROXY_REFUSAL}`)
    .split('\n')]
}

/**
 * Starts HAProxy on `sections` (each a block of configuration lines: `defaults`, `listen`…) and
 * resolves once its admin socket answers. `user` runs it as that user (setpriv), so that a
 * folder of daemons has one owner.
 * @example const haproxy = await startHaproxy({ dir, sections: [['defaults', '  mode tcp'], ['listen api', '  bind 127.0.0.1:8000', '  server one 127.0.0.1:8001']] })
 */
export async function startHaproxy (options: { dir: string, sections: string[][], user?: string }): Promise<Haproxy> {
  const { dir, sections, user } = options
  const socket = join(dir, 'haproxy.sock')
  const config = join(dir, 'haproxy.cfg')
  writeFileSync(config, [
    'global',
    // HAProxy sizes itself by the descriptors it may open; a recipe's own global section sets more.
    '  maxconn 2000',
    `  stats socket ${socket} mode 600 level admin`,
    ...sections.flat(),
    ''
  ].join('\n'), { mode: 0o644 })
  const log = openSync(join(dir, 'haproxy.log'), 'a')
  const args = [HAPROXY, '-db', '-f', config]
  const child = user === undefined
    ? spawn(args[0]!, args.slice(1), { cwd: dir, stdio: ['ignore', log, log] })
    : spawn('setpriv', [`--reuid=${user}`, `--regid=${user}`, '--init-groups', ...args], { cwd: dir, stdio: ['ignore', log, log] })
  closeSync(log)
  const exited = ownChild(child)

  const command = async (line: string): Promise<string> => await new Promise((resolve, reject) => {
    let answer = ''
    const connection = createConnection(socket, () => connection.end(`${line}\n`))
    connection.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk })
    connection.once('error', reject)
    connection.once('close', () => resolve(answer))
  })

  const stop = async (): Promise<void> => await stopChild(child, exited, 'SIGTERM')

  const deadline = Date.now() + 10_000
  for (;;) {
    if ((await command('show info').catch(() => '')).includes('Pid:')) break
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`HAProxy did not start:\n${readFileSync(join(dir, 'haproxy.log'), 'utf8')}`)
    }
    await sleep(100)
  }

  return {
    async status () {
      // CSV: the proxy's name, the server's, … the 18th field its status.
      const lines = (await command('show stat')).split('\n').filter((line) => line !== '' && !line.startsWith('#'))
      return new Map(lines.map((line) => line.split(',')).map((fields) => [`${fields[0]}/${fields[1]}`, fields[17] ?? '']))
    },
    command,
    stop
  }
}
