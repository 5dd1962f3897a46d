/**
 * The image leg: the real Dockerfile built by podman on the base scripts/image-base.sh makes
 * (the layer cache serves unchanged steps), then run as an orchestrator runs it: on a named
 * volume with no settings, twice on one PostgreSQL through PgBouncer, with the CLI beside it, and
 * as deploy/kubernetes's overlays describe it, played by `podman kube play`.
 * npm reaches its registry through a TLS-intercepting proxy here, whose CA only the host's bundle
 * has: the bundle is mounted into the build, as docs/deployment.md tells a team behind one.
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment'
import type { IContainer } from 'kubernetes-models/v1/Container'
import { parse, stringify } from 'yaml'
import { AUTH, skippedFile } from '../support/helper.js'
import { createDatabase, type PostgresDatabase } from '../support/postgres-database.js'
import { ROOT, TEST_KEY } from '../support/constants.js'
import { freePorts, waitUntilUp } from '../support/process.js'
import { KUBERNETES_DIR, kubectlMissing, only, overlayDir, renderOnTop, type KubernetesObject, type Overlay } from '../support/kubernetes.js'

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
const kubectlSkip = skip === false ? kubectlMissing() : false
if (kubectlSkip !== false) skippedFile(`Image tests of deploy/kubernetes skipped: ${kubectlSkip}`)

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
      const response = await fetch(`${two!.origin}/v1/pets`, { headers: AUTH })
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

  describe('deploy/kubernetes played by `podman kube play`', { skip: kubectlSkip }, () => {
    let dir: string
    before(() => { dir = mkdtempSync(join(tmpdir(), 'petstore-kube-')) })
    after(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

    /**
     * The overlay rendered from a temporary overlay of the run: the leg's image through kustomize's
     * `images`, every name suffixed with the run's (pods, claim, Secret: several runs on one
     * machine); `kustomization` adds to it.
     */
    function render (overlay: Overlay, kustomization: Record<string, unknown> = {}): KubernetesObject[] {
      const base = parse(readFileSync(join(KUBERNETES_DIR, 'base/kustomization.yaml'), 'utf8')) as { images: Array<{ newName: string }> }
      const [newName, newTag] = IMAGE.split(':')
      return renderOnTop([overlayDir(overlay)], { nameSuffix: `-${RUN}`, images: [{ name: base.images[0]!.newName, newName, newTag }], ...kustomization })
    }

    /**
     * What podman 4.3 needs beyond the manifest, made on the rendered objects (docs/deployment.md#kubernetes
     * lists them): one replica; restartPolicy OnFailure, since podman applies the pod's policy to init
     * containers and would restart `migrate` forever under Always; the emptyDirs named after the run,
     * since podman makes each a named volume of its name; and the ports: a hostPort for each (podman
     * publishes every container port, and has no --publish), or, for `--network host`, none, the
     * service's PORT and METRICS_PORT moved to free ones instead (the host's ports are shared).
     * Returns the host port of each named container port.
     */
    async function adapt (objects: KubernetesObject[], network: 'pod' | 'host'): Promise<Map<string, number>> {
      const deployment = only(objects, 'Deployment') as unknown as IDeployment
      const spec = deployment.spec!
      const pod = spec.template.spec!
      spec.replicas = 1
      pod.restartPolicy = 'OnFailure'
      const renamed = new Map<string, string>()
      for (const volume of pod.volumes ?? []) {
        if (volume.emptyDir === undefined) continue
        renamed.set(volume.name, `${RUN}-${volume.name}`)
        volume.name = `${RUN}-${volume.name}`
      }
      const containers: IContainer[] = [...pod.initContainers ?? [], ...pod.containers]
      for (const mount of containers.flatMap((container) => container.volumeMounts ?? [])) mount.name = renamed.get(mount.name) ?? mount.name
      const service = pod.containers.find((container) => container.name === 'petstore')!
      const ports = new Map<string, number>()
      const free = await freePorts(service.ports!.length)
      service.ports!.forEach((port, i) => ports.set(port.name!, free[i]!))
      if (network === 'pod') {
        for (const port of service.ports!) port.hostPort = ports.get(port.name!)
      } else {
        service.env!.push({ name: 'PORT', value: String(ports.get('http')) }, { name: 'METRICS_PORT', value: String(ports.get('metrics')) })
        delete service.ports
      }
      return ports
    }

    const volumes = async (): Promise<string[]> => (await podman('volume', 'ls', '--quiet', '--filter', 'dangling=true')).stdout.trim().split('\n')
    /** The volumes left over before each play: what `down` must not remove. */
    const leftBefore = new Map<string, Set<string>>()

    /** `podman kube play` of `objects` (written to a file); resolves with the service's container. */
    async function play (objects: KubernetesObject[], name: string, args: string[] = []): Promise<string> {
      leftBefore.set(name, new Set(await volumes()))
      const file = join(dir, `${name}.yaml`)
      writeFileSync(file, objects.map((object) => stringify(object)).join('---\n'))
      const { stdout } = await podman('kube', 'play', ...args, file)
      const container = /Container:\n(\w+)/.exec(stdout)?.[1]
      assert.ok(container !== undefined, stdout)
      return container
    }

    /**
     * `podman kube down`, then the anonymous volumes the play left (the image's VOLUME /data of a
     * container that mounts nothing there, an init container's too), which podman 4.3 keeps.
     */
    async function down (name: string): Promise<void> {
      await podman('kube', 'down', join(dir, `${name}.yaml`))
      const anonymous = []
      for (const volume of (await volumes()).filter((volume) => volume !== '' && !leftBefore.get(name)!.has(volume))) {
        const { stdout } = await podman('volume', 'inspect', '--format', '{{.Anonymous}}', volume).catch(() => ({ stdout: 'false' }))
        if (stdout.trim() === 'true') anonymous.push(volume)
      }
      if (anonymous.length > 0) await podman('volume', 'rm', '--force', ...anonymous)
    }

    /** Each probe's httpGet sent from the host, as the kubelet sends it: podman runs none (and the image has no curl). */
    async function probe (objects: KubernetesObject[], ports: Map<string, number>): Promise<void> {
      const service = (only(objects, 'Deployment') as unknown as IDeployment).spec!.template.spec!.containers.find((container) => container.name === 'petstore')!
      for (const check of [service.startupProbe, service.readinessProbe, service.livenessProbe]) {
        const { path, port } = check!.httpGet!
        const url = `http://127.0.0.1:${ports.get(String(port))!}${path!}`
        await waitUntilUp(url, 60_000)
        assert.equal((await fetch(url)).status, 200, url)
      }
    }

    async function firstKeyOf (container: string): Promise<string> {
      const { stderr } = await podman('logs', container)
      const key = /no API key was configured.*\n\s+(petstore_api_\S+)\n/.exec(stderr)?.[1]
      assert.ok(key !== undefined, `no first key in the log:\n${stderr}`)
      return key
    }

    describe('overlays/sqlite', () => {
      let objects: KubernetesObject[]
      let ports: Map<string, number>
      let container: string | undefined
      let claim: string

      before(async () => {
        objects = render('sqlite')
        ports = await adapt(objects, 'pod')
        claim = only(objects, 'PersistentVolumeClaim').metadata.name
        container = await play(objects, 'sqlite')
      })
      after(async () => {
        if (container !== undefined) await down('sqlite')
        await podman('volume', 'rm', '--force', claim).catch(() => {})
      })

      let key: string
      let pet: { id: number, name: string }

      it('answers its probes and a create, as the manifest\'s uid, its file on the claim', async () => {
        await probe(objects, ports)
        key = await firstKeyOf(container!)
        pet = await createPet(`http://127.0.0.1:${ports.get('http')!}`, key, 'Rex')
        const runAsUser = (only(objects, 'Deployment') as unknown as IDeployment).spec!.template.spec!.securityContext!.runAsUser!
        const { stdout } = await podman('exec', container!, 'sh', '-c', 'id -u; stat -c %u /data/petstore.db')
        assert.deepEqual(stdout.trim().split('\n'), [String(runAsUser), String(runAsUser)])
      })

      it('writes nothing outside /data and the manifest\'s own volumes', async () => {
        const service = (only(objects, 'Deployment') as unknown as IDeployment).spec!.template.spec!.containers.find((c) => c.name === 'petstore')!
        const mounts = (service.volumeMounts ?? []).map((mount) => mount.mountPath)
        const { stdout } = await podman('exec', container!, 'sh', '-c', '(find / \\( -path /proc -o -path /sys \\) -prune -o -user "$(id -u)" -print) 2>/dev/null; true')
        const written = stdout.trim().split('\n').filter((path) => path !== '')
        assert.ok(written.some((path) => path.startsWith('/data/')), stdout)
        assert.deepEqual(written.filter((path) => !mounts.some((mount) => path === mount || path.startsWith(`${mount}/`))), [],
          `paths of uid ${service.securityContext?.runAsUser ?? 'the pod\'s'} outside ${mounts.join(', ')}`)
      })

      it('serves the animal again after `kube down` and a second play (without the claim: podman 4.3 refuses one whose volume exists)', async () => {
        await down('sqlite')
        container = undefined
        const again = objects.filter((object) => object.kind !== 'PersistentVolumeClaim')
        container = await play(again, 'sqlite')
        await probe(objects, ports)
        const response = await getPet(`http://127.0.0.1:${ports.get('http')!}`, key, pet.id)
        assert.equal(response.status, 200)
        assert.deepEqual(await response.json(), pet)
      })
    })

    describe('overlays/postgres, on the suite\'s PostgreSQL through PgBouncer', { skip: postgresSkip }, () => {
      let database: PostgresDatabase
      let objects: KubernetesObject[]
      let ports: Map<string, number>
      let container: string | undefined
      let secret: string | undefined
      let started: string

      before(async () => {
        database = await createDatabase(process.env.TEST_DATABASE_URL!, 'kube', process.env.TEST_PGBOUNCER_URL!)
        // The Secret a team creates, made here by the run's own overlay.
        objects = render('postgres', { secretGenerator: [{ name: 'petstore', literals: [`DATABASE_URL=${database.url}`] }] })
        // podman takes no Secret kind: a podman secret of its data, as JSON, stands for it.
        const made = only(objects, 'Secret') as KubernetesObject & { data: Record<string, string> }
        await podman('secret', 'create', made.metadata.name, writeTemp('secret.json', JSON.stringify(made.data)))
        secret = made.metadata.name
        objects = objects.filter((object) => object.kind !== 'Secret')
        ports = await adapt(objects, 'host')
        // Host networking: 127.0.0.1 inside is PgBouncer's.
        started = new Date().toISOString()
        container = await play(objects, 'postgres', ['--network', 'host'])
      })
      after(async () => {
        if (container !== undefined) await down('postgres')
        if (secret !== undefined) await podman('secret', 'rm', secret)
        await database?.drop()
      })

      function writeTemp (name: string, text: string): string {
        writeFileSync(join(dir, name), text, { mode: 0o600 })
        return join(dir, name)
      }

      it('migrates in its init container, answers its probes, and creates and lists', async () => {
        await probe(objects, ports)
        // podman 4.3 removes an init container once it has run: its events remain.
        const pod = `${only(objects, 'Deployment').metadata.name}-pod-0`
        const { stdout: events } = await podman('events', '--stream=false', '--since', started, '--filter', 'event=died', '--filter', 'event=start',
          '--format', '{{.Status}} {{.Name}} {{.ContainerExitCode}}')
        const lines = events.trim().split('\n')
        const migrated = lines.indexOf(`died ${pod}-migrate 0`)
        assert.ok(migrated >= 0 && migrated < lines.indexOf(`start ${pod}-petstore 0`), events)
        const origin = `http://127.0.0.1:${ports.get('http')!}`
        const key = await firstKeyOf(container!)
        const created = await createPet(origin, key, 'Tom')
        const response = await fetch(`${origin}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })
        assert.deepEqual((await response.json() as Array<{ id: number }>).map(({ id }) => id), [created.id])
      })
    })
  })
})
