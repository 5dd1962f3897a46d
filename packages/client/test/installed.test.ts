/**
 * The packed client installed into an empty project, as an app would: it must bring none
 * of the server's dependencies, and its calls must reach the real server from there.
 */
import assert from 'node:assert/strict'
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { TEST_KEY, startTestServer, typeErrors, type TestServer } from './server-support.js'
import { QUIET, packClient, run, type Packed } from './packed.js'

const SERVER_PACKAGES = ['fastify', 'better-sqlite3', 'pg', 'ioredis', 'pino', 'prom-client', '@sinclair/typebox', 'commander']

// Run from the app's directory: lists, creates and gets, an int64 above 2^53 among the values.
const APP = `import { PetstoreClient, isPetstoreError } from '@petstore/client'

const [baseUrl, apiKey] = process.argv.slice(2)
const client = new PetstoreClient({ baseUrl, apiKey })
const created = await client.createPet({ name: 'Installed', categoryId: 9007199254740993n })
const got = await client.getPet(created.id)
const page = await client.listPets({ limit: 100 })
let missing
try { await client.getPet(999999) } catch (err) { missing = isPetstoreError(err, 'not_found') ? err.status : String(err) }
const exact = (_key, value) => typeof value === 'bigint' ? \`\${value}n\` : value
console.log(JSON.stringify({ created, got, listed: page.pets, missing }, exact))
`

// Compiles only if every line under @ts-expect-error is an error: the shipped types refuse what the API refuses.
const TYPED_APP = `import { PetstoreClient, type NewPet, type Pet } from '@petstore/client'

export const client = new PetstoreClient({ baseUrl: 'http://127.0.0.1:8080/v1', apiKey: 'key' })
export const rex: NewPet = { name: 'Rex', categoryId: 9007199254740993n }
export const read = async (): Promise<Pet> => await client.createPet(rex)
// @ts-expect-error the service assigns the id
export const withId: NewPet = { id: 42, name: 'Rex', categoryId: 3 }
// @ts-expect-error categoryId is required
export const withoutCategory: NewPet = { name: 'Rex' }
// @ts-expect-error status is one of the enumeration
export const lost: NewPet = { name: 'Rex', categoryId: 3, status: 'lost' }
`

describe('the packed client installed into an empty project', () => {
  let server: TestServer
  let packed: Packed
  let app: string

  before(async () => {
    server = await startTestServer()
    packed = await packClient()
    app = join(packed.dir, 'app')
    await run('mkdir', [app])
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
    // lossless-json is in npm's cache from the repository's own install.
    await run('npm', ['install', packed.tarball, '--prefer-offline', ...QUIET], { cwd: app })
  })
  after(async () => {
    await server?.close()
    if (packed !== undefined) rmSync(packed.dir, { recursive: true, force: true })
  })

  it('ships the built code, its types, README and CHANGELOG, and no source or test', () => {
    assert.ok(packed.files.includes('dist/index.js'))
    assert.ok(packed.files.includes('dist/index.d.ts'))
    assert.ok(packed.files.includes('README.md'))
    assert.ok(packed.files.includes('CHANGELOG.md'))
    assert.deepEqual(packed.files.filter((file) => !file.startsWith('dist/') && !['package.json', 'README.md', 'CHANGELOG.md'].includes(file)), [])
  })

  it('installs lossless-json and nothing of the server', () => {
    const installed = readdirSync(join(app, 'node_modules')).filter((name) => !name.startsWith('.'))
    assert.deepEqual(installed.sort(), ['@petstore', 'lossless-json'])
    for (const name of SERVER_PACKAGES) assert.ok(!installed.includes(name.split('/')[0]!), `${name} is installed`)
  })

  it('lists, creates and gets animals against the real server, int64 values exact', async () => {
    writeFileSync(join(app, 'app.js'), APP)
    const { stdout } = await run('node', ['app.js', server.api, TEST_KEY], { cwd: app })
    const { created, got, listed, missing } = JSON.parse(stdout) as { created: { id: number }, got: unknown, listed: unknown[], missing: unknown }
    assert.deepEqual(created, { id: created.id, name: 'Installed', categoryId: '9007199254740993n', status: 'available' })
    assert.deepEqual(got, created)
    assert.deepEqual(listed, [created])
    assert.equal(missing, 404)
  })

  it('types NewPet from the API: no id, categoryId required, status of the enumeration', () => {
    const file = join(app, 'typed.ts')
    writeFileSync(file, TYPED_APP)
    assert.deepEqual(typeErrors(file), [])
  })
})
