import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { get, post, startTestServer, type TestServer } from '../helper.js'

describe('the access log', () => {
  let server: TestServer
  before(async () => { server = await startTestServer() })
  after(async () => { await server.close() })

  const lineOf = (response: Response): Record<string, unknown> => {
    const requestId = response.headers.get('x-request-id')
    const line = server.logs().find((entry) => entry.msg === 'request' && entry.requestId === requestId)
    assert.ok(line !== undefined, `no request line for ${requestId}`)
    return line
  }

  it('writes one line a request: method, route pattern, status and whole microseconds', async () => {
    const { id } = await (await post(server, '/pets', { name: 'Rex', categoryId: 3 })).json() as { id: number }
    const response = await get(server, `/pets/${id}?note=secret`)
    assert.equal(response.status, 200)
    const { method, route, status, micros, ...rest } = lineOf(response)
    assert.deepEqual({ method, route, status }, { method: 'GET', route: '/v1/pets/:petId', status: 200 })
    assert.ok(Number.isSafeInteger(micros) && (micros as number) >= 0, `micros: ${String(micros)}`)
    assert.deepEqual(Object.keys(rest).sort(), ['hostname', 'level', 'msg', 'pid', 'requestId', 'time'])
  })

  it('names no route for an unknown path, and never the URL as sent', async () => {
    const response = await get(server, '/nothing-here?key=secret')
    assert.equal(response.status, 404)
    const line = lineOf(response)
    assert.equal(line.route, '(no route)')
    assert.ok(!JSON.stringify(line).includes('secret'))
  })
})
