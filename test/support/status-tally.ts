/**
 * Many requests at once, counted by status: a flood, a burst, a load beside something else.
 */

/**
 * Sends `count` requests, `concurrency` at a time, each body read to its end: the count of each status.
 * @example const statuses = await tallyStatuses(100, 4, async () => await get(server, '/pets')); assert.equal(statuses[200], 100)
 */
export async function tallyStatuses (count: number, concurrency: number, send: (i: number) => Promise<Response>): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {}
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const response = await send(next++)
      await response.arrayBuffer()
      statuses[response.status] = (statuses[response.status] ?? 0) + 1
    }
  }))
  return statuses
}
