/**
 * The image leg: the real Dockerfile built by podman on the base scripts/image-base.sh makes
 * (the layer cache serves unchanged steps), then run as an orchestrator runs it: on a named
 * volume with no settings, twice on one PostgreSQL through PgBouncer, and with the CLI beside it.
 * npm reaches its registry through a TLS-intercepting proxy here, whose CA only the host's bundle
 * has: the bundle is mounted into the build, as docs/deployment.md tells a team behind one.
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { skippedFile } from '../support/helper.js'
import { createDatabase, type PostgresDatabase } from '../support/postgres-database.js'
import { ROOT, TEST_KEY } from '../support/constants.js'
import { freePorts, waitUntilUp } from '../support/process.js'

const IMAGE = 'localhost/petstore:test'
const MAX_SIZE = 300_000_000
const RUN = `petstore-test-${randomBytes(4).toString('hex')}`
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string, license: string }

const skip = spawnSync('podman', ['--version']).status === 0 ? false : 'podman is missing (bash scripts/image-base.sh, as root)'
if (skip !== false) skippedFile(`Image tests skipped: ${skip}`)
const postgresSkip = process.env.TEST_DATABASE_URL === undefined || process.env.TEST_PGBOUNCER_URL === undefined
  ? 'TEST_DATABASE_URL and TEST_PGBOUNCER_URL are not both set'
  : false
if (skip === false && postgresSkip !== false) skippedFile(`Image tests on PostgreSQL skipped: ${postgresSkip}`)

/** `podman ARGS…`; throws with podman's stderr when it fails. */
async function podman (...args: string[]): Promise<{ stdout: string, stderr: string }> {
  try {
    return await promisify(execFile)('podman', args, { maxBuffer: 64 * 1024 * 1024 })
  } catch (err) {
    const { stderr } = err as { stderr?: string }
    throw new Error(`podman ${args.join(' ')} failed: ${stderr ?? (err as Error).message}`)
  }
}

const containers: string[] = []
/** Starts a container of the image, detached, named after this run; `args` go before the image. */
async function runContainer (name: string, args: string[]): Promise<string> {
  const full = `${RUN}-${name}`
  containers.push(full)
  await podman('run', '-d', '--name', full, ...args, IMAGE)
  return full
}

/** The part of `podman image inspect` a deployment relies on. */
interface ImageConfig {
  Env: string[]
  Labels: Record<string, string>
  ExposedPorts: Record<string, unknown>
  Volumes: Record<string, unknown>
  Entrypoint: string[]
  Cmd: string[]
  User: string
}

async function createPet (origin: string, key: string, name: string): Promise<{ id: number, name: string }> {
  const response = await fetch(`${origin}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1 })
  })
  assert.equal(response.status, 201, await response.clone().text())
  return await response.json() as { id: number, name: string }
}

async function getPet (origin: string, key: string, id: number): Promise<Response> {
  return await fetch(`${origin}/v1/pets/${id}`, { headers: { authorization: `Bearer ${key}` } })
}

describe('the container image', { skip }, () => {
  before(async () => {
    const started = Date.now()
    // The host's CA bundle, for npm behind the proxy: /mnt exists in every Debian base, so the
    // mount leaves no mount point behind in either stage.
    await podman('build', '--pull=never', '-t', IMAGE, '-v', '/etc/ssl/certs:/mnt:ro',
      '--build-arg', 'NODE_EXTRA_CA_CERTS=/mnt/ca-certificates.crt', ROOT)
    console.log(`image built in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  })

  after(async () => {
    if (containers.length > 0) await podman('rm', '--force', '--volumes', '--time', '0', '--ignore', ...containers)
    await podman('volume', 'rm', '--force', `${RUN}-data`).catch(() => {})
  })

  it('is at most 300 MB, with the defaults, labels and user a deployment relies on', async () => {
    const size = Number((await podman('image', 'inspect', '--format', '{{.Size}}', IMAGE)).stdout)
    console.log(`image size: ${size} bytes (${(size / 1e6).toFixed(1)} MB)`)
    assert.ok(size <= MAX_SIZE, `${size} bytes, above ${MAX_SIZE}`)
    const [image] = JSON.parse((await podman('image', 'inspect', IMAGE)).stdout) as Array<{ Config: ImageConfig }>
    const { Env, Labels, ExposedPorts, Volumes, Entrypoint, Cmd, User } = image!.Config
    for (const setting of ['HOST=0.0.0.0', 'METRICS_HOST=0.0.0.0', 'DATABASE_URL=sqlite:/data/petstore.db']) assert.ok(Env.includes(setting), setting)
    assert.ok(!Env.some((variable) => variable.startsWith('NODE_EXTRA_CA_CERTS=')), 'the build\'s CA bundle setting reached the image')
    assert.equal(Labels['org.opencontainers.image.version'], pkg.version)
    assert.equal(Labels['org.opencontainers.image.licenses'], pkg.license)
    assert.ok('org.opencontainers.image.source' in Labels)
    assert.deepEqual(Object.keys(ExposedPorts).sort(), ['8080/tcp', '9464/tcp'])
    assert.deepEqual(Object.keys(Volumes), ['/data'])
    assert.deepEqual(Entrypoint, ['/usr/bin/tini', '-g', '--'])
    assert.deepEqual(Cmd, ['petstore', 'serve'])
    assert.equal(User, 'petstore')
  })

  it('holds Node.js, dist/ and the production dependencies, nothing else', async () => {
    const { stdout } = await podman('run', '--rm', '--entrypoint', 'sh', IMAGE, '-c',
      'ls -A /app; echo ---; for tool in npm npx gcc cc make python3 tsc; do command -v $tool; done; ' +
      'for path in /app/src /app/test /app/node_modules/typescript /app/node_modules/tsx /app/node_modules/@petstore /root/.npm /mnt/ca-certificates.crt; do [ -e $path ] && echo $path; done; ' +
      'echo ---; command -v petstore; node --version')
    const [app, extra, present] = stdout.split('---\n')
    assert.deepEqual(app!.trim().split('\n'), ['dist', 'node_modules', 'package.json'])
    assert.equal(extra!.trim(), '', 'a build tool, source or cache in the runtime image')
    assert.match(present!, /^\/usr\/local\/bin\/petstore\nv20\.\d+\.\d+\n$/)
  })

  describe('on a named volume, with no settings', () => {
    let origin: string
    let firstKey: string
    let pet: { id: number, name: string }

    before(async () => {
      const [port] = await freePorts(1)
      origin = `http://127.0.0.1:${port!}`
      await runContainer('one', ['-v', `${RUN}-data:/data`, '-p', `127.0.0.1:${port!}:8080`])
      await waitUntilUp(`${origin}/readyz`, 60_000)
    })

    it('answers /readyz, prints the first key in its log, creates with it', async () => {
      const { stderr } = await podman('logs', `${RUN}-one`)
      const match = /no API key was configured.*\n\s+(petstore_api_\S+)\n/.exec(stderr)
      assert.ok(match !== null, `no first key in the log:\n${stderr}`)
      firstKey = match[1]!
      pet = await createPet(origin, firstKey, 'Rex')
    })

    it('runs the service as a non-root user under tini', async () => {
      const { stdout } = await podman('top', `${RUN}-one`, 'pid', 'ppid', 'user', 'args')
      const processes = stdout.trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/))
      const init = processes.find(([pid]) => pid === '1')
      assert.equal(init?.[3], '/usr/bin/tini', stdout)
      const service = processes.find(([, ppid]) => ppid === '1')
      assert.ok(service !== undefined && service.slice(3).join(' ').includes('petstore serve'), stdout)
      assert.equal(service[2], 'petstore', stdout)
      const { stdout: uid } = await podman('exec', `${RUN}-one`, 'id', '-u')
      assert.notEqual(uid.trim(), '0')
    })

    it('stops on `podman stop -t 15` within 15 s, exit code 0', async () => {
      const started = Date.now()
      await podman('stop', '-t', '15', `${RUN}-one`)
      const took = Date.now() - started
      assert.ok(took < 15_000, `${took} ms`)
      assert.equal((await podman('inspect', '--format', '{{.State.ExitCode}}', `${RUN}-one`)).stdout.trim(), '0')
      assert.match((await podman('logs', `${RUN}-one`)).stdout, /"msg":"closed"/)
    })

    it('serves the animal from a new container on the same volume, and a key `petstore keys create` made there', async () => {
      const [port] = await freePorts(1)
      origin = `http://127.0.0.1:${port!}`
      await runContainer('two', ['-v', `${RUN}-data:/data`, '-p', `127.0.0.1:${port!}:8080`])
      await waitUntilUp(`${origin}/readyz`, 60_000)
      const response = await getPet(origin, firstKey, pet.id)
      assert.equal(response.status, 200)
      assert.deepEqual(await response.json(), pet)

      const { stdout } = await podman('run', '--rm', '-v', `${RUN}-data:/data`, IMAGE, 'petstore', 'keys', 'create', '--name', 'image-cli')
      const key = /petstore_api_\S+/.exec(stdout)?.[0]
      assert.ok(key !== undefined, stdout)
      await createPet(origin, key, 'Fido')
    })
  })

  describe('two containers on one PostgreSQL through PgBouncer', { skip: postgresSkip }, () => {
    let database: PostgresDatabase
    const instances: Array<{ origin: string, metrics: string }> = []

    before(async () => {
      database = await createDatabase(process.env.TEST_DATABASE_URL!, 'image', process.env.TEST_PGBOUNCER_URL!)
      // Host networking: 127.0.0.1 inside is PgBouncer's; each container listens on ports of its own.
      await podman('run', '--rm', '--network', 'host', '-e', `DATABASE_URL=${database.url}`, IMAGE, 'petstore', 'migrate')
      const ports = await freePorts(4)
      for (const [index, name] of ['pg-one', 'pg-two'].entries()) {
        const [port, metricsPort] = [ports[2 * index]!, ports[2 * index + 1]!]
        await runContainer(name, ['--network', 'host', '-e', `DATABASE_URL=${database.url}`, '-e', `PETSTORE_API_KEYS=${TEST_KEY}`,
          '-e', `PORT=${port}`, '-e', `METRICS_PORT=${metricsPort}`])
        instances.push({ origin: `http://127.0.0.1:${port}`, metrics: `http://127.0.0.1:${metricsPort}/metrics` })
      }
      await Promise.all(instances.map(async ({ origin }) => await waitUntilUp(`${origin}/readyz`, 60_000)))
    })

    after(async () => {
      const names = [`${RUN}-pg-one`, `${RUN}-pg-two`].filter((name) => containers.includes(name))
      if (names.length > 0) await podman('rm', '--force', '--volumes', '--time', '0', '--ignore', ...names)
      await database?.drop()
    })

    it('lists on one the animals created on the other', async () => {
      const [one, two] = instances
      const created = [await createPet(one!.origin, TEST_KEY, 'Rex'), await createPet(one!.origin, TEST_KEY, 'Tom')]
      const response = await fetch(`${two!.origin}/v1/pets`, { headers: { authorization: `Bearer ${TEST_KEY}` } })
      assert.equal(response.status, 200)
      const listed = await response.json() as Array<{ id: number }>
      assert.deepEqual(listed.map(({ id }) => id), created.map(({ id }) => id))
    })

    it('answers /metrics of each from outside its container', async () => {
      for (const { metrics } of instances) {
        const response = await fetch(metrics)
        assert.equal(response.status, 200)
        assert.match(await response.text(), /^petstore_/m)
      }
    })
  })
})
