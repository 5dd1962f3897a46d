/**
 * Configuration: each setting is an environment variable and a flag of
 * `petstore serve`; parsed once into a frozen, typed Config. A bad value is a
 * ConfigError whose message is the whole line shown to the operator.
 * Hand-written rather than commander's Option.env(): its errors name the flag,
 * never the environment variable the operator actually set.
 */
import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { RATE_LIMIT_DEFAULT } from './schemas/limits.js'
import { BrokenRule, instant, integer } from './schemas/operator-values.js'
import { MalformedAddress, parseAddress } from './store/postgres/address.js'
import { POOL_WAIT_DEFAULT_MS } from './store/store.js'

/** When getPet was deprecated (the `Deprecation` header); docs/decisions.md says why this date. */
export const GETPET_DEPRECATED_AT = new Date('2026-01-01T00:00:00Z')

/** Above the idle timeouts of the balancers most often in front: AWS ALB's and nginx's 60 s, Traefik's 90 s (docs/deployment.md). */
export const KEEP_ALIVE_TIMEOUT_DEFAULT_S = 120

export interface Config {
  databaseUrl: string
  /** A standby serving lists and gets (PostgreSQL only); undefined: the primary serves every read. */
  databaseReadUrl: string | undefined
  port: number
  host: string
  /** Port of the metrics listener; 0 turns it off. */
  metricsPort: number
  metricsHost: string
  /** Keys accepted as they are, from PETSTORE_API_KEYS: both scopes. */
  apiKeys: readonly string[]
  /** Keys accepted as they are, from PETSTORE_READ_ONLY_KEYS: pets:read alone. */
  readOnlyApiKeys: readonly string[]
  /** Addresses and CIDRs of the proxies whose X-Forwarded-For is believed; empty: none. */
  trustProxy: readonly string[]
  /** Production base address, ending in /v1; undefined: built from each request's Host. */
  publicBaseUrl: string | undefined
  /** Staging base address, listed second in the OpenAPI `servers`. */
  stagingBaseUrl: string | undefined
  logLevel: string
  workers: number
  /** Requests a minute per API key; 0 turns the limit off. */
  rateLimit: number
  redisUrl: string | undefined
  /** Prefix of every Redis key, so deployments can share one Redis. */
  redisKeyPrefix: string
  /** From this instant on, getPet answers 410. */
  getPetSunset: Date
  /** Seconds between SIGTERM (readyz turns 503) and closing the listener, for load balancers to notice. */
  shutdownDelay: number
  /** Seconds an idle keep-alive connection is kept open: longer than the load balancer in front keeps its own. */
  keepAliveTimeout: number
  /** Origins whose browser pages may call the API (CORS); empty: no CORS header at all. */
  corsOrigins: readonly string[]
  /** Milliseconds a request may wait, for the CPU or a database connection, before new ones are refused (src/http/stages/admission.ts); undefined: never refused. */
  maxQueueDelay: number | undefined
  /** Milliseconds a database call waits for a connection at most, then 503. */
  poolWait: number
  /** How the operator gave each setting, for messages: its flag (`--port`), else its variable (`PORT`). */
  names: Readonly<Record<SettingKey, string>>
}

export type SettingKey = Exclude<keyof Config, 'names'>

/** Some settings of Config, with how the operator gave each. */
export type Settings<K extends SettingKey> = Readonly<Pick<Config, K> & { names: Readonly<Record<K, string>> }>

export class ConfigError extends Error {
  override name = 'ConfigError'
}

interface Setting<K extends SettingKey> {
  key: K
  env: string
  /** `--flag` of `petstore serve`. */
  flag: string
  default: string | undefined
  help: string
  /** Returns the value, or throws BrokenRule: the rule, as in "must be …". */
  parse: (raw: string) => Config[K]
  /** An empty variable is refused rather than taken as unset: its default would be a quiet wrong answer. */
  emptyRefused?: true
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

function hostName (raw: string): string {
  if (raw === '' || /\s/.test(raw)) throw new BrokenRule('must be a host name or an IP address')
  return raw
}

function baseUrl (raw: string): string {
  let url: URL
  try { url = new URL(raw) } catch { throw new BrokenRule('must be an absolute http(s) URL such as https://api.example.com/v1') }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BrokenRule('must be an absolute http(s) URL such as https://api.example.com/v1')
  // An empty query or fragment (`…/v1?`) reads as '' but stays in href, and so in every link.
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(raw)) throw new BrokenRule('must have no query or fragment')
  // The spec: the version segment v1 is the last part of the base address; paths are appended to it.
  if (!/\/v1\/?$/.test(url.pathname)) throw new BrokenRule('must end in /v1, the API\'s version segment, such as https://api.example.com/v1')
  return url.href.replace(/\/$/, '')
}

const PROXY_FORM = 'must be comma-separated IP addresses or CIDRs, such as 10.0.0.0/8,127.0.0.1'

function proxies (raw: string): readonly string[] {
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/')
    const version = isIP(address)
    if (version === 0 || extra !== undefined) throw new BrokenRule(PROXY_FORM)
    if (prefix !== undefined && (!/^[0-9]{1,3}$/.test(prefix) || Number(prefix) > (version === 4 ? 32 : 128))) throw new BrokenRule(PROXY_FORM)
  }
  return Object.freeze(entries)
}

const ORIGIN_FORM = 'each must be an origin as a browser sends it, scheme://host[:port] with nothing after, such as https://shop.example'

function origins (raw: string): readonly string[] {
  const list = raw.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  for (const origin of list) {
    let url: URL | undefined
    try { url = new URL(origin) } catch {}
    // A browser's Origin header is the serialized origin: lower-case, no default port, no path; anything else never matches.
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      throw new BrokenRule(`${ORIGIN_FORM}: ${origin} is not`)
    }
  }
  return Object.freeze(list)
}

/** Keys accepted as they are: each 16 to 512 printable ASCII characters without spaces. */
function apiKeyList (raw: string): readonly string[] {
  const keys = raw.split(',').map((key) => key.trim()).filter((key) => key !== '')
  if (keys.some((key) => !/^[\x21-\x7e]{16,512}$/.test(key))) throw new BrokenRule('each key must be 16 to 512 printable ASCII characters, without spaces')
  return Object.freeze(keys)
}

/** A libpq URL, one host or several (src/store/postgres/address.ts), as written. */
function postgresAddress (raw: string): string {
  try {
    parseAddress(raw)
  } catch (err) {
    if (err instanceof MalformedAddress) throw new BrokenRule(err.message)
    throw err
  }
  return raw
}

function optional<T> (parse: (raw: string) => T) {
  return (raw: string): T | undefined => raw === '' ? undefined : parse(raw)
}

/** Every setting, in the order of `.env.example` and `petstore serve --help`. */
export const SETTINGS = [
  {
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    flag: 'database-url',
    default: 'sqlite:./data/petstore.db',
    help: 'sqlite:PATH (created and migrated on first start) or postgres://USER@HOST:PORT/DB, several hosts as libpq takes them (HOST1:PORT1,HOST2:PORT2; read-write unless target_session_attrs says otherwise); a part left out comes from libpq\'s variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE), postgres:// alone takes them all',
    // A missing secret (`DATABASE_URL=${DATABASE_URL}`) must not start an instance on an empty local file.
    emptyRefused: true,
    parse: (raw: string) => {
      if (raw === '') throw new BrokenRule('is empty: name a database, or unset it for sqlite:./data/petstore.db')
      // A 201 promises the animal is on disk: an in-memory database could not keep it.
      if (raw === 'sqlite::memory:') throw new BrokenRule('must name a file (sqlite:./data/petstore.db): an in-memory database is not durable')
      if (/^sqlite:.+/.test(raw)) return raw
      // `postgres://` alone is libpq's too: every part from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE.
      if (/^postgres(ql)?:\/\//.test(raw)) return postgresAddress(raw)
      throw new BrokenRule('must start with sqlite: or postgres://')
    }
  },
  {
    key: 'databaseReadUrl',
    env: 'DATABASE_READ_URL',
    flag: 'database-read-url',
    default: '',
    help: 'postgres://USER@HOST:PORT/DB of a synchronous standby (HAProxy\'s /sync listener) serving lists and gets; several hosts mean prefer-standby (unset: the primary serves every read)',
    parse: optional((raw: string) => {
      if (raw.startsWith('sqlite:')) throw new BrokenRule('must be a postgres:// URL: an SQLite file has no standby')
      if (!/^postgres(ql)?:\/\/.+/.test(raw)) throw new BrokenRule('must start with postgres://')
      return postgresAddress(raw)
    })
  },
  { key: 'port', env: 'PORT', flag: 'port', default: '8080', help: 'TCP port to listen on', parse: integer(1, 65535) },
  { key: 'host', env: 'HOST', flag: 'host', default: '127.0.0.1', help: 'address to listen on (0.0.0.0 for every interface)', parse: hostName },
  {
    key: 'metricsPort',
    env: 'METRICS_PORT',
    flag: 'metrics-port',
    default: '9464',
    help: 'TCP port of GET /metrics, apart from the API (it names API keys); 0 turns it off',
    parse: integer(0, 65535)
  },
  { key: 'metricsHost', env: 'METRICS_HOST', flag: 'metrics-host', default: '127.0.0.1', help: 'address of the metrics listener (keep it off the open internet)', parse: hostName },
  {
    key: 'apiKeys',
    env: 'PETSTORE_API_KEYS',
    flag: 'api-keys',
    default: '',
    help: 'comma-separated keys accepted as they are, each 16 to 512 printable ASCII characters without spaces (keys from `petstore keys create` live in the database)',
    parse: apiKeyList
  },
  {
    key: 'readOnlyApiKeys',
    env: 'PETSTORE_READ_ONLY_KEYS',
    flag: 'read-only-keys',
    default: '',
    help: 'comma-separated keys accepted with the pets:read scope alone (list and get, never create), as PETSTORE_API_KEYS; for browser pages',
    parse: apiKeyList
  },
  {
    key: 'trustProxy',
    env: 'TRUST_PROXY',
    flag: 'trust-proxy',
    default: '',
    help: 'comma-separated addresses or CIDRs of the proxies in front; the client is the nearest X-Forwarded-For address not among them (unset: the peer, X-Forwarded-For ignored)',
    parse: proxies
  },
  { key: 'publicBaseUrl', env: 'PUBLIC_BASE_URL', flag: 'public-base-url', default: '', help: 'production base address, ending in /v1, e.g. https://api.example.com/v1 (unset: from the Host header)', parse: optional(baseUrl) },
  { key: 'stagingBaseUrl', env: 'STAGING_BASE_URL', flag: 'staging-base-url', default: '', help: 'staging base address, ending in /v1, listed in the OpenAPI servers', parse: optional(baseUrl) },
  {
    key: 'logLevel',
    env: 'LOG_LEVEL',
    flag: 'log-level',
    default: 'info',
    help: LOG_LEVELS.join(', '),
    parse: (raw: string) => {
      if (!LOG_LEVELS.includes(raw)) throw new BrokenRule(`must be one of ${LOG_LEVELS.join(', ')}`)
      return raw
    }
  },
  {
    key: 'workers',
    env: 'WORKERS',
    flag: 'workers',
    default: '1',
    help: 'processes serving the port; auto: one per core',
    parse: (raw: string) => raw === 'auto' ? availableParallelism() : integer(1, 256)(raw)
  },
  { key: 'rateLimit', env: 'RATE_LIMIT', flag: 'rate-limit', default: String(RATE_LIMIT_DEFAULT), help: 'requests a minute per API key; 0 turns the limit off', parse: integer(0, 1_000_000_000) },
  {
    key: 'redisUrl',
    env: 'REDIS_URL',
    flag: 'redis-url',
    default: '',
    help: 'redis://HOST:PORT shares rate-limit counts and failed authentications between instances (unset: counted per process)',
    parse: optional((raw: string) => {
      if (!/^rediss?:\/\/.+/.test(raw)) throw new BrokenRule('must start with redis:// or rediss://')
      return raw
    })
  },
  {
    key: 'redisKeyPrefix',
    env: 'REDIS_KEY_PREFIX',
    flag: 'redis-key-prefix',
    default: 'petstore:',
    help: 'prefix of the Redis keys, so several deployments can share one Redis',
    parse: (raw: string) => {
      if (!/^[\x21-\x7e]{1,64}$/.test(raw)) throw new BrokenRule('must be 1 to 64 printable ASCII characters, without spaces')
      return raw
    }
  },
  {
    key: 'getPetSunset',
    env: 'GETPET_SUNSET',
    flag: 'getpet-sunset',
    default: '2030-12-05T00:00:00Z',
    help: 'instant from which the deprecated GET /v1/pets/{petId} answers 410 Gone, with its offset (Z or ±hh:mm); not before 2026-01-01T00:00:00Z, its deprecation',
    parse: (raw: string) => {
      // Up to the whole second, as the Sunset header (an HTTP date) says it: never a 200 after the instant it names.
      const date = new Date(Math.ceil(instant(raw).getTime() / 1000) * 1000)
      // RFC 8594: a Sunset earlier than the Deprecation would tell clients nonsense.
      if (date < GETPET_DEPRECATED_AT) throw new BrokenRule(`must not be before ${GETPET_DEPRECATED_AT.toISOString().replace('.000Z', 'Z')}, when getPet was deprecated`)
      return date
    }
  },
  {
    key: 'shutdownDelay',
    env: 'SHUTDOWN_DELAY',
    flag: 'shutdown-delay',
    default: '0',
    help: 'seconds to keep serving after SIGTERM with /readyz at 503, so a load balancer stops sending first',
    parse: integer(0, 300)
  },
  {
    key: 'keepAliveTimeout',
    env: 'KEEP_ALIVE_TIMEOUT',
    flag: 'keep-alive-timeout',
    default: String(KEEP_ALIVE_TIMEOUT_DEFAULT_S),
    help: 'seconds an idle keep-alive connection stays open; longer than the idle timeout of the load balancer in front (AWS ALB and nginx 60, Traefik 90)',
    parse: integer(1, 86_400)
  },
  {
    key: 'corsOrigins',
    env: 'CORS_ORIGINS',
    flag: 'cors-origins',
    default: '',
    help: 'comma-separated origins whose browser pages may call the API, e.g. https://shop.example (unset: no CORS header at all)',
    parse: origins
  },
  {
    key: 'maxQueueDelay',
    env: 'MAX_QUEUE_DELAY',
    flag: 'max-queue-delay',
    default: '50',
    help: 'milliseconds a request may wait in a queue of the service\'s own (its work for the CPU, more calls waiting for a database connection than a turn serves) before new requests behind a key are refused at once with 503 and Retry-After (off: never refused; 0: every one refused)',
    parse: (raw: string) => {
      if (raw === 'off') return undefined
      if (!/^[0-9]+$/.test(raw) || Number(raw) > 60_000) throw new BrokenRule('must be off, or an integer from 0 to 60000')
      return Number(raw)
    }
  },
  {
    key: 'poolWait',
    env: 'POOL_WAIT',
    flag: 'pool-wait',
    default: String(POOL_WAIT_DEFAULT_MS),
    help: 'milliseconds a database call waits for a connection at most when more calls wait ahead of it than a turn of the connections serves, then answers 503 and Retry-After',
    parse: integer(1, 60_000)
  }
] as const satisfies ReadonlyArray<Setting<SettingKey>>

/**
 * Reads the settings `keys` (only those: a command is not stopped by a setting it never uses)
 * from flags first, then the environment, then the default. An empty variable is an unset one;
 * an empty flag is checked as given.
 * @throws ConfigError `DATABASE_URL: must start with sqlite: or postgres://`
 * @example const { databaseUrl } = parseSettings(['databaseUrl'], process.env, { 'database-url': 'sqlite:./x.db' })
 */
export function parseSettings<K extends SettingKey> (keys: readonly K[], env: Record<string, string | undefined>, flags: Record<string, string | undefined> = {}): Settings<K> {
  const config: Record<string, unknown> = {}
  const names: Record<string, string> = {}
  for (const setting of SETTINGS) {
    if (!(keys as readonly SettingKey[]).includes(setting.key)) continue
    const fromFlag = flags[setting.flag]
    // `PORT=` (as `PORT=${PORT}` leaves it in a compose file) means no PORT, as for most tools.
    const fromEnv = env[setting.env] === '' && !('emptyRefused' in setting) ? undefined : env[setting.env]
    const raw = fromFlag ?? fromEnv ?? setting.default ?? ''
    names[setting.key] = fromFlag === undefined ? setting.env : `--${setting.flag}`
    try {
      config[setting.key] = setting.parse(raw)
    } catch (rule) {
      if (!(rule instanceof BrokenRule)) throw rule
      throw new ConfigError(`${names[setting.key]}: ${rule.message}`)
    }
  }
  // The one rule across two settings: a standby serves reads only beside a PostgreSQL primary.
  if (config.databaseReadUrl !== undefined && typeof config.databaseUrl === 'string' && !config.databaseUrl.startsWith('postgres')) {
    throw new ConfigError(`${names.databaseReadUrl}: needs a postgres:// ${names.databaseUrl}, as an SQLite file has no standby`)
  }
  config.names = Object.freeze(names)
  return Object.freeze(config as Settings<K>)
}

const EVERY_SETTING: readonly SettingKey[] = SETTINGS.map((setting) => setting.key)

/**
 * Reads every setting, as `parseSettings` does: what `petstore serve` runs on.
 * @throws ConfigError `PORT: must be an integer from 1 to 65535`
 * @example const config = parseConfig(process.env, { port: '9090' })
 */
export function parseConfig (env: Record<string, string | undefined>, flags: Record<string, string | undefined> = {}): Config {
  return parseSettings(EVERY_SETTING, env, flags)
}

/** How traces leave the process: OTLP over HTTP, as OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL asks. */
export interface Tracing {
  protocol: string
}

/**
 * Whether to export traces, from the standard OpenTelemetry variables: on when an OTLP endpoint is
 * set (OTEL_EXPORTER_OTLP_ENDPOINT or its _TRACES_ form) or OTEL_TRACES_EXPORTER=otlp asks for the
 * default one; off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The values themselves
 * (URLs, sampler, batches) are the SDK's to read and judge, with its own warnings.
 * @example parseTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }) // { protocol: 'http/protobuf' }
 */
export function parseTracing (env: Record<string, string | undefined>): Tracing | undefined {
  const read = (name: string): string | undefined => env[name] === '' ? undefined : env[name]?.trim()
  if (read('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined
  const exporter = read('OTEL_TRACES_EXPORTER')
  const endpoint = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? read('OTEL_EXPORTER_OTLP_ENDPOINT')
  if (exporter === 'none' || (endpoint === undefined && exporter !== 'otlp')) return undefined
  return Object.freeze({ protocol: read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? read('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf' })
}
