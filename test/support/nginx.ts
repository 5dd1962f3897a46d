/**
 * nginx (Debian's nginx-light) for a test, in a folder the test owns: deploy/nginx/petstore.conf
 * as an operator loads it, its listen port and its instances replaced by the test's, under a main
 * configuration of one worker. Stopped by the test, or killed if the test file ends first.
 */
import { spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT } from './constants.js'
import { ownChild, programMissing, stopChild } from './programs.js'

const NGINX = '/usr/sbin/nginx'
/** The recipe of docs/deployment.md#nginx. */
export const NGINX_RECIPE = join(ROOT, 'deploy/nginx/petstore.conf')

export interface Nginx {
  origin: string
  /** The lines of nginx's error log so far. */
  errors: () => string
  stop: () => Promise<void>
}

/** Why nginx cannot run here, or false when it can. */
export function nginxMissing (): string | false {
  return programMissing(NGINX, 'nginx-light')
}

/**
 * The recipe with `listen` on `port` and the upstream's servers at `instances` (host:port), each
 * server line's parameters kept.
 * @example recipeFor(8000, ['127.0.0.1:8001', '127.0.0.1:8002'])
 */
export function recipeFor (port: number, instances: string[]): string {
  const recipe = readFileSync(NGINX_RECIPE, 'utf8')
  const servers = [...recipe.matchAll(/^( *)server \S+( [^;\n]*)?;$/gm)]
  if (servers.length === 0) throw new Error('no server line in the recipe')
  const [, indent, parameters = ''] = servers[0]!
  const lines = instances.map((instance) => `${indent}server ${instance}${parameters};`).join('\n')
  return recipe
    .replace(servers.map((match) => match[0]).join('\n'), lines)
    .replace(/^( *)listen \d+;$/m, `$1listen 127.0.0.1:${port};`)
}

/**
 * @example const nginx = await startNginx({ dir, port, instances: [new URL(server.origin).host] })
 */
export async function startNginx ({ dir, port, instances }: { dir: string, port: number, instances: string[] }): Promise<Nginx> {
  const temp = join(dir, 'nginx-temp')
  mkdirSync(temp, { recursive: true })
  writeFileSync(join(dir, 'petstore.conf'), recipeFor(port, instances))
  const config = join(dir, 'nginx.conf')
  writeFileSync(config, [
    'user root;',
    'worker_processes 1;',
    'daemon off;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'nginx-error.log')} info;`,
    'events { worker_connections 1024; }',
    'http {',
    `  access_log ${join(dir, 'nginx-access.log')};`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(temp, kind)};`),
    `  include ${join(dir, 'petstore.conf')};`,
    '}',
    ''
  ].join('\n'))
  const log = openSync(join(dir, 'nginx-output.log'), 'a')
  const child = spawn(NGINX, ['-c', config, '-p', dir], { cwd: dir, stdio: ['ignore', log, log] })
  closeSync(log)
  const exited = ownChild(child)
  const errors = (): string => { try { return readFileSync(join(dir, 'nginx-error.log'), 'utf8') } catch { return '' } }
  const stop = async (): Promise<void> => await stopChild(child, exited, 'SIGQUIT')
  const origin = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      await fetch(`${origin}/healthz`)
      break
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`nginx did not start:\n${errors()}${readFileSync(join(dir, 'nginx-output.log'), 'utf8')}`)
    }
    await sleep(100)
  }
  return { origin, errors, stop }
}
