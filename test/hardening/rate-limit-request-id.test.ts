import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backends, get, startTestServer } from '../helper.js'

for (const backend of backends()) {
  describe(`${backend.name}: the rate limit counter's outage`, { skip: backend.skip }, () => {
    it('is logged with the request id of the request that met it', async () => {
      const server = await startTestServer({ backend: backend.name, env: { RATE_LIMIT: '2', REDIS_URL: 'redis://127.0.0.1:1' } })
      try {
        const response = await get(server, '/pets')
        assert.equal(response.status, 200)
        const warning = server.logs().find((line) => line.msg === 'rate limit counter unavailable; requests are not limited')
        assert.ok(warning, 'a warning')
        assert.equal(warning.requestId, response.headers.get('x-request-id'))
      } finally {
        await server.close()
      }
    })
  })
}
