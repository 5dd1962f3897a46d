import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Batcher } from '../../src/store/batcher.js'
import { Slots } from '../../src/store/slots.js'
import { ConnectionWaitExceeded } from '../../src/store/store-errors.js'

describe('Slots: turns for a connection, each wait bounded', () => {
  it('grants free slots at once, then in the order asked, and counts who waits and for how long', async () => {
    const slots = new Slots(2, 1_000)
    assert.equal(slots.take().atOnce, true)
    assert.equal(slots.take().atOnce, true)
    const order: string[] = []
    const third = slots.take()
    const fourth = slots.take()
    void third.granted.then(() => order.push('third'))
    void fourth.granted.then(() => order.push('fourth'))
    assert.equal(slots.count(), 2)
    await sleep(30)
    assert.ok(slots.oldestMs() >= 25, `the oldest waited ${slots.oldestMs()} ms`)
    slots.release()
    slots.release()
    await third.granted
    await fourth.granted
    assert.deepEqual(order, ['third', 'fourth'])
    assert.equal(slots.count(), 0)
    assert.equal(slots.oldestMs(), 0)
  })

  it('refuses a wait past its bound with ConnectionWaitExceeded, and gives the slot to the next waiter', async () => {
    const slots = new Slots(1, 50)
    slots.take()
    const started = performance.now()
    const refused = slots.take()
    await assert.rejects(refused.granted, (err) => err instanceof ConnectionWaitExceeded && err.waitedMs === 50)
    const waited = performance.now() - started
    assert.ok(waited >= 45 && waited < 1_000, `refused after ${waited} ms`)
    assert.equal(slots.count(), 0)
    const next = slots.take()
    slots.release()
    await next.granted
  })

  it('forgets a cancelled wait, and takes back a slot granted to one who no longer wants it', async () => {
    const slots = new Slots(1, 1_000)
    const holder = slots.take()
    const leaving = slots.take()
    const staying = slots.take()
    leaving.cancel()
    assert.equal(slots.count(), 1)
    slots.release()
    await staying.granted
    staying.cancel()
    assert.equal(slots.take().atOnce, true, 'the slot came back')
    holder.cancel()
  })
})

describe('Batcher on Slots', () => {
  it('refuses an item that waited for its turn past the bound, alone; the batch before it commits', async () => {
    let release: () => void = () => {}
    const committed: number[][] = []
    const batcher = new Batcher<number, number>(async (items) => {
      committed.push(items)
      if (items.includes(1)) await new Promise<void>((resolve) => { release = resolve })
      return items
    }, { maxBatch: 10, gatherTurn: false }, new Slots(1, 50))
    const first = batcher.submit(1)
    const second = batcher.submit(2)
    await assert.rejects(second, ConnectionWaitExceeded)
    release()
    assert.equal(await first, 1)
    assert.equal(await batcher.submit(3), 3)
    assert.deepEqual(committed, [[1], [3]])
  })
})
