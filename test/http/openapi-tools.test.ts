import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import { tsImport } from 'tsx/esm/api'
import { startTestServer, type TestServer } from '../support/helper.js'
import { ROOT, TEST_KEY } from '../support/constants.js'
import { typeErrors } from '../support/type-errors.js'

const run = promisify(execFile)

const PROGRAM = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

export async function exercise (baseUrl: string, apiKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${apiKey}\` } })
  // status is optional in the request body: it defaults to available.
  const created = await client.POST('/pets', { body: { name: 'Generated', categoryId: 7 } })
  if (created.data === undefined) throw new Error(\`createPet: \${created.response.status}\`)
  const id: number = created.data.id
  const listed = await client.GET('/pets', { params: { query: { limit: 10, status: 'available' } } })
  const got = await client.GET('/pets/{petId}', { params: { path: { petId: id } } })
  const missing = await client.GET('/pets/{petId}', { params: { path: { petId: 999999 } } })
  const code: string | undefined = missing.error?.code
  return { created: created.data, listed: listed.data, got: got.data, missing: code }
}
`

// Compiles only if every line under @ts-expect-error is an error: the models refuse what the API refuses.
const MODELS = `import type { components } from './schema.js'

type Pet = components['schemas']['Pet']
type NewPet = components['schemas']['NewPet']

export const pet: Pet = { id: 42, name: 'Rex', categoryId: 3, status: 'available' }
export const status: components['schemas']['PetStatus'] = pet.status
export const page: components['schemas']['Pets'] = [pet]
export const error: components['schemas']['Error'] = { code: 'not_found', message: 'petId: no animal with id 42', status: 404 }
export const created: NewPet = { name: 'Rex', categoryId: 3 }
// @ts-expect-error the service assigns the id
export const withId: NewPet = { id: 42, name: 'Rex', categoryId: 3 }
// @ts-expect-error categoryId is required
export const withoutCategory: NewPet = { name: 'Rex' }
// @ts-expect-error status is one of the enumeration
export const unknownStatus: Pet = { ...pet, status: 'lost' }
`

describe('GET /v1/openapi.json with the tools people use', () => {
  let server: TestServer
  let dir: string
  let documentFile: string
  let document: Record<string, unknown>
  before(async () => {
    server = await startTestServer()
    dir = join(ROOT, 'test-output', `openapi-${randomBytes(4).toString('hex')}`)
    mkdirSync(dir, { recursive: true })
    const response = await fetch(`${server.api}/openapi.json`)
    assert.equal(response.status, 200)
    document = await response.json() as Record<string, unknown>
    documentFile = join(dir, 'openapi.json')
    writeFileSync(documentFile, JSON.stringify(document))
  })
  after(async () => {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('passes @redocly/cli lint (recommended rules) with no error and no warning', async () => {
    const result = await run(join(ROOT, 'node_modules/.bin/redocly'), ['lint', documentFile], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' }
    }).catch((err: { code: number, stdout: string, stderr: string }) => err)
    const output = `${result.stdout}${result.stderr}`
    assert.equal('code' in result ? result.code : 0, 0, output)
    assert.match(output, /Your API description is valid/)
    assert.doesNotMatch(output, /You have \d+ warnings?/)
  })

  it('serves paths relative to the base address, which ends in /v1', () => {
    assert.deepEqual(Object.keys(document.paths as object), ['/pets', '/pets/{petId}'])
    assert.deepEqual((document.servers as Array<{ url: string }>).map((s) => s.url), [server.api])
  })

  it('gives openapi-typescript types that accept a createPet without status and refuse a misspelt field', async () => {
    writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(document as never)))
    const program = join(dir, 'program.ts')
    writeFileSync(program, PROGRAM)
    assert.deepEqual(typeErrors(program), [])

    const wrong = join(dir, 'wrong.ts')
    writeFileSync(wrong, PROGRAM.replace('categoryId: 7 }', 'categoryID: 7 }'))
    assert.ok(typeErrors(wrong).some((message) => message.includes('categoryID')), 'a misspelt field does not compile')
  })

  it('gives openapi-typescript named models: Pet, Pets, PetStatus, Error, and a NewPet that refuses an id and needs a categoryId', async () => {
    const types = astToString(await openapiTS(document as never))
    writeFileSync(join(dir, 'schema.ts'), types)
    assert.match(types, /^ {8}Pet: \{$/m)
    assert.match(types, /status: components\["schemas"\]\["PetStatus"\];/)
    const models = join(dir, 'models.ts')
    writeFileSync(models, MODELS)
    assert.deepEqual(typeErrors(models), [])
  })

  it('lets an openapi-fetch client list, create and get against the live server', async () => {
    // A user's TypeScript, run as they would run it: through tsx.
    const { exercise } = await tsImport(join(dir, 'program.ts'), import.meta.url) as {
      exercise: (baseUrl: string, apiKey: string) => Promise<{ created: { id: number }, listed: Array<{ id: number }>, got: unknown, missing: string }>
    }
    const { created, listed, got, missing } = await exercise(server.api, TEST_KEY)
    assert.deepEqual(created, { id: created.id, name: 'Generated', categoryId: 7, status: 'available' })
    assert.ok(listed.some((pet) => pet.id === created.id))
    assert.deepEqual(got, created)
    assert.equal(missing, 'not_found')
  })
})
