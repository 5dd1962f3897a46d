/**
 * The feature-costs server must give the ceiling's answers at every step, or the
 * costs it measures would be those of other work. Real HTTP, a real SQLite file
 * migrated and filled by the service's store.
 */
import assert from 'node:assert/strict'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type RequestListener, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Writable } from 'node:stream'
import pino from 'pino'
import { generateAnimals } from '../../bench/animals.js'
import { ceilingHandler } from '../../bench/ceiling.js'
import { featureCostsListener } from '../../bench/feature-costs.js'
import { FEATURE_STEPS, stepFeatures } from '../../bench/feature-steps.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'

const KEY = 'bench-key-0123456789abcdef'
const ANIMALS = 50

async function listen (listener: RequestListener): Promise<{ origin: string, server: Server }> {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server }
}

interface Seen { status: number, body: string, location: string | null }

/** What a target answers to the bench's requests, and to a few it must refuse. */
async function answers (origin: string): Promise<Seen[]> {
  const auth = { authorization: `Bearer ${KEY}` }
  const requests: Array<[string, RequestInit]> = [
    ['/v1/pets/1', { headers: auth }],
    [`/v1/pets/${ANIMALS}`, { headers: auth }],
    [`/v1/pets/${ANIMALS + 1}`, { headers: auth }],
    ['/v1/pets/1', { headers: { authorization: 'Bearer wrong' } }],
    ['/v1/pets', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":3}' }],
    ['/v1/pets', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Rex"}' }]
  ]
  const seen: Seen[] = []
  for (const [path, init] of requests) {
    const response = await fetch(`${origin}${path}`, init)
    seen.push({ status: response.status, body: await response.text(), location: response.headers.get('location')?.replace(origin, '') ?? null })
  }
  return seen
}

describe('bench/feature-costs.ts', () => {
  let dir: string
  let seeded: string
  let expected: Seen[]

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-costs-'))
    seeded = join(dir, 'seeded.db')
    const store = openSqliteStore(seeded)
    await store.migrate()
    await store.importPets(generateAnimals(ANIMALS))
    await store.close()
    const ceiling = await listen(ceilingHandler(generateAnimals(ANIMALS), KEY))
    expected = await answers(ceiling.origin)
    ceiling.server.close()
  })

  after(() => rmSync(dir, { recursive: true, force: true }))

  for (const step of ['none', ...FEATURE_STEPS] as const) {
    it(`answers as the ceiling does with ${step === 'none' ? 'no feature' : `the features up to ${step}`}`, async () => {
      const databasePath = join(dir, `${step}.db`)
      copyFileSync(seeded, databasePath)
      const lines: string[] = []
      const logger = pino({}, new Writable({ write (chunk: Buffer, _encoding, done) { lines.push(chunk.toString()); done() } }))
      const { listener, close } = await featureCostsListener({ features: step === 'none' ? [] : stepFeatures(step), apiKey: KEY, animals: ANIMALS, databasePath, logger })
      const { origin, server } = await listen(listener)
      try {
        const seen = await answers(origin)
        // The ceiling's error messages are its own; statuses, codes and every 2xx body must match.
        assert.deepEqual(seen.map(({ status, location }) => ({ status, location })), expected.map(({ status, location }) => ({ status, location })))
        seen.forEach((answer, index) => {
          if (answer.status < 300) assert.equal(answer.body, expected[index]!.body)
          else assert.equal(JSON.parse(answer.body).code, JSON.parse(expected[index]!.body).code)
        })
        const logs = step !== 'none' && stepFeatures(step).includes('log')
        assert.equal(lines.length > 0, logs, logs ? 'no request line logged' : 'a request line logged before the log step')
      } finally {
        server.close()
        await close()
      }
    })
  }
})
