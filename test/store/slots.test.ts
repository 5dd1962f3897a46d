import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Batcher } from '../../src/store/batcher.js'
import { Slots, type Waiter } from '../../src/store/slots.js'
import { ConnectionWaitExceeded } from '../../src/store/store-errors.js'

/** A waiter that records what it was told. */
function waiter (told: string[], name: string): Waiter {
  return { since: 0, state: 'waiting', granted: () => told.push(`${name} granted`), refused: () => told.push(`${name} refused`) }
}

/** A slot for a create that goes with the others waiting (as the Batcher's are): a share of a turn. */
async function takeBatched (slots: Slots): Promise<void> {
  if (slots.tryTake()) return
  await new Promise<void>((resolve, reject) => { slots.wait({ since: 0, state: 'waiting', batched: true, granted: resolve, refused: reject }) })
}

describe('Slots: turns for a connection, each wait beyond the next turn bounded', () => {
  it('grants free slots at once, then in the order asked, and counts who waits and for how long', async () => {
    const slots = new Slots(2, 1_000)
    assert.equal(slots.tryTake(), true)
    await slots.take()
    assert.equal(slots.tryTake(), false)
    const order: string[] = []
    const third = slots.take().then(() => order.push('third'))
    const fourth = slots.take().then(() => order.push('fourth'))
    assert.equal(slots.count(), 2)
    await sleep(30)
    assert.ok(slots.oldestMs() >= 25, `the oldest waited ${slots.oldestMs()} ms`)
    slots.release()
    slots.release()
    await Promise.all([third, fourth])
    assert.deepEqual(order, ['third', 'fourth'])
    assert.equal(slots.count(), 0)
    assert.equal(slots.oldestMs(), 0)
  })

  it('refuses a wait beyond the next turn past its bound with ConnectionWaitExceeded; the call the next turn serves waits on', async () => {
    const slots = new Slots(1, 50)
    assert.equal(slots.tryTake(), true)
    const told: string[] = []
    const next = slots.take().then(() => told.push('next granted'))
    const started = performance.now()
    await assert.rejects(slots.take(), (err) => err instanceof ConnectionWaitExceeded && err.waitedMs === 50)
    const waited = performance.now() - started
    assert.ok(waited >= 45 && waited < 1_000, `refused after ${waited} ms`)
    assert.equal(slots.count(), 1)
    await sleep(100)
    assert.deepEqual(told, [], 'the next in line still waits, past the bound')
    slots.release()
    await next
    assert.deepEqual(told, ['next granted'])
  })

  it('tells how long the oldest waited only while a call asking now would wait beyond the next turn', async () => {
    const slots = new Slots(1, 1_000, 3)
    assert.equal(slots.tryTake(), true)
    const waiting = [takeBatched(slots), takeBatched(slots)]
    await sleep(30)
    assert.equal(slots.oldestMs(), 0, 'two wait: a third would be served by the next turn too')
    waiting.push(takeBatched(slots))
    assert.ok(slots.oldestMs() >= 25, `the oldest waited ${slots.oldestMs()} ms`)
    slots.release()
    await Promise.all(waiting.slice(0, 1))
    assert.equal(slots.oldestMs(), 0)
    slots.release()
    slots.release()
    slots.release()
    await Promise.all(waiting)
  })

  it('bounds the waits of a queue deeper than a turn of several connections, each serving several', async () => {
    const slots = new Slots(2, 50, 3)
    assert.ok(slots.tryTake() && slots.tryTake())
    const outcomes = Array.from({ length: 8 }, async () => await takeBatched(slots).then(() => 'granted', () => 'refused'))
    await sleep(100)
    for (let i = 0; i < 6; i++) slots.release()
    assert.deepEqual(await Promise.all(outcomes), [...Array(6).fill('granted'), 'refused', 'refused'])
  })

  it('counts a batched waiter as a share of a turn, any other call as a whole one', async () => {
    const slots = new Slots(2, 50, 4)
    assert.ok(slots.tryTake() && slots.tryTake())
    const waiting = [slots.take(), takeBatched(slots), takeBatched(slots), takeBatched(slots)]
    await sleep(20)
    assert.equal(slots.oldestMs(), 0, 'a read and three creates: the next turn serves them, and a fourth create')
    const beyond = slots.take().then(() => 'granted', () => 'refused')
    assert.ok(slots.oldestMs() >= 15, `a second read is beyond the next turn: the oldest waited ${slots.oldestMs()} ms`)
    assert.equal(await beyond, 'refused')
    for (let i = 0; i < waiting.length; i++) slots.release()
    await Promise.all(waiting)
  })

  it('forgets a waiter that left: it is neither granted nor refused, and the next one is', async () => {
    const slots = new Slots(1, 50)
    assert.equal(slots.tryTake(), true)
    const told: string[] = []
    const leaving = waiter(told, 'leaving')
    slots.wait(leaving)
    slots.wait(waiter(told, 'staying'))
    slots.leave(leaving)
    assert.equal(slots.count(), 1)
    slots.release()
    assert.deepEqual(told, ['staying granted'])
    slots.release()
    assert.equal(slots.tryTake(), true, 'the slot came back')
    await sleep(80)
    assert.deepEqual(told, ['staying granted'], 'no refusal after the bound')
  })
})

describe('Batcher on Slots', () => {
  it('refuses an item that waited past the bound beyond the next batch, alone; the batches before it commit', async () => {
    let release: () => void = () => {}
    const committed: number[][] = []
    const batcher = new Batcher<number, number>(async (items) => {
      committed.push(items)
      if (items.includes(1)) await new Promise<void>((resolve) => { release = resolve })
      return items
    }, { maxBatch: 2, gatherTurn: false }, new Slots(1, 50, 2))
    const first = batcher.submit(1)
    const nextBatch = [batcher.submit(2), batcher.submit(3)]
    await assert.rejects(batcher.submit(4), ConnectionWaitExceeded)
    release()
    assert.equal(await first, 1)
    assert.deepEqual(await Promise.all(nextBatch), [2, 3])
    assert.equal(await batcher.submit(5), 5)
    assert.deepEqual(committed, [[1], [2, 3], [5]])
  })
})
