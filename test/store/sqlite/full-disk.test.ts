import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { errorBody, post, startTestServer, type TestServer, skippedFile } from '../../support/helper.js'
import { listAll } from '../../support/list-pages.js'
import { fillDisk, mountSmallDisk } from '../../support/small-disk.js'

const disk = mountSmallDisk('2m')
if ('refused' in disk) skippedFile(`SQLite full-disk test skipped: cannot mount a tmpfs (${disk.refused})`)

describe('sqlite: creates on a full disk', { skip: 'refused' in disk }, () => {
  const dir = 'dir' in disk ? disk.dir : ''
  const filler = join(dir, 'filler')
  let server: TestServer
  const created: number[] = []

  before(async () => {
    server = await startTestServer({ database: { url: `sqlite:${join(dir, 'petstore.db')}`, directUrl: `sqlite:${join(dir, 'petstore.db')}`, drop: async () => {} } })
  })
  after(async () => {
    await server?.close()
    if ('unmount' in disk) disk.unmount()
  })

  async function create (name: string): Promise<Response> {
    const response = await post(server, '/pets', { name, categoryId: 3 })
    if (response.status === 201) created.push((await response.clone().json() as { id: number }).id)
    return response
  }

  it('refuses creates with 503 unavailable and Retry-After once the disk is full', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await create(`before ${i}`)).status, 201)
    fillDisk(filler)
    // SQLite may still fit a few creates in pages it holds already; a full disk shows within these.
    let refused: Response | undefined
    for (let i = 0; i < 500 && refused === undefined; i++) {
      const response = await create(`full ${i}`)
      if (response.status !== 201) refused = response
    }
    assert.ok(refused !== undefined, 'a create was refused')
    assert.equal(refused.status, 503)
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.equal((await errorBody(refused)).code, 'unavailable')
  })

  it('creates again once space returns, and every animal answered 201 is there', async () => {
    rmSync(filler)
    const response = await create('after')
    assert.equal(response.status, 201)
    const listed = (await listAll(`${server.api}/pets?limit=100`)).map((pet) => pet.id)
    assert.deepEqual(listed, [...created].sort((a, b) => a - b))
  })
})
