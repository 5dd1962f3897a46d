/**
 * A test server whose database a test can make unreadable for real: the SQLite
 * store closed under the running app, or PostgreSQL (or its pooler) reached through a proxy that is cut.
 */
import { createTestDatabase, startTestServer, throughAddress, type Backend, type StartOptions, type TestServer } from './helper.js'
import { TcpProxy } from './tcp-proxy.js'

export interface BreakableServer {
  server: TestServer
  /** From now on every read of the database fails. */
  cutDatabase: () => Promise<void>
  close: () => Promise<void>
}

/**
 * @example const { server, cutDatabase, close } = await startBreakableServer('postgres')
 */
export async function startBreakableServer (backend: Backend['name'], options: Omit<StartOptions, 'backend' | 'database'> = {}): Promise<BreakableServer> {
  if (backend === 'sqlite') {
    const server = await startTestServer({ ...options, backend })
    return {
      server,
      cutDatabase: async () => { await server.store.close() },
      close: async () => {
        await server.app.close()
        await server.metrics.close()
        await server.database.drop()
      }
    }
  }
  const database = await createTestDatabase(backend)
  const target = new URL(database.url)
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) })
  // Short waits: a cut connection is given up within a second, as in test/store/postgres/outage.test.ts.
  const server = await startTestServer({ postgres: { timeoutMs: 800 }, ...options, database: throughAddress(database, '127.0.0.1', proxy.port) })
  return {
    server,
    cutDatabase: async () => { proxy.cut('reset') },
    close: async () => {
      await server.close()
      await proxy.close()
      await database.drop()
    }
  }
}
