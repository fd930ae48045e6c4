import { describe, expect, it } from 'vitest'
import type { TLShapeId } from 'tldraw'
import { env, geo, makeEditor, makeRig, page } from './harness'

class MemStorage implements Storage {
  private m = new Map<string, string>()
  get length() { return this.m.size }
  clear() { this.m.clear() }
  getItem(k: string) { return this.m.get(k) ?? null }
  key(i: number) { return [...this.m.keys()][i] ?? null }
  removeItem(k: string) { this.m.delete(k) }
  setItem(k: string, v: string) { this.m.set(k, v) }
}

// An update of one shape's x: what the steward sends for a move (layout is worked out on its mirror).
const moveTo = (id: string, x: number, shape = 'a') => ({ name: 'update_shape' as const, id, params: { id: shape, x } })

describe('executor: what each run drew', () => {
  it('reports the shapes a final action created or changed, not previews', () => {
    const rig = makeRig()
    rig.executor.receive(env('s', 1, [geo('a', 0, 0)], true)) // a preview
    expect(rig.drawn).toEqual([])
    rig.executor.receive(env('s', 2, [geo('a', 0, 0), geo('b', 200, 0)]))
    rig.executor.receive(env('t', 1, [moveTo('m1', 10, 'b')]))
    expect(rig.drawn.map(([s, ids]) => [s, [...ids].sort()])).toEqual([
      ['s', ['shape:a']],
      ['s', ['shape:b']],
      ['t', ['shape:b']],
    ])
  })
})

describe('executor: exactly once, in order', () => {
  it('applies each action once when envelopes are duplicated', () => {
    const rig = makeRig()
    const e1 = env('s', 1, [geo('a', 0, 0)])
    const e2 = env('s', 2, [moveTo('m1', 10)])
    rig.executor.receive(e1)
    rig.executor.receive(e2)
    rig.executor.receive(e2)
    rig.executor.receive(e1)
    expect(page(rig.editor).a!.x).toBe(10)
    // every envelope is acked, the duplicate too, with the ids it had applied
    expect(rig.acks.map((a) => [a.seq, a.applied])).toEqual([
      [1, ['c-a']],
      [2, ['m1']],
      [2, ['m1']],
      [1, ['c-a']],
    ])
    expect(rig.acks.every((a) => a.appliedAt > 1e9)).toBe(true)
  })

  it('skips an action id already applied in another envelope of the session', () => {
    const rig = makeRig()
    rig.executor.receive(env('s', 1, [geo('a', 0, 0), moveTo('m1', 10)]))
    rig.executor.receive(env('s', 2, [moveTo('m1', 10), moveTo('m2', 15)]))
    expect(page(rig.editor).a!.x).toBe(15)
    expect(rig.acks[1]!.applied).toEqual(['m2'])
  })

  it('holds out-of-order envelopes until the gap fills, and asks for a resync', () => {
    const rig = makeRig()
    rig.executor.receive(env('s', 3, [moveTo('m3', 100)]))
    rig.executor.receive(env('s', 2, [moveTo('m2', 10)]))
    expect(page(rig.editor).a).toBeUndefined()
    expect(rig.acks).toHaveLength(0)
    expect(rig.resyncs).toEqual([{ sessionId: 's', lastSeq: 0 }])
    rig.executor.receive(env('s', 1, [geo('a', 0, 0)]))
    expect(page(rig.editor).a!.x).toBe(100) // seq 2 before seq 3
    // the filled gap is acked once, cumulatively: seqs 1 to 3 applied
    expect(rig.acks.map((a) => [a.seq, a.cumulative, a.applied])).toEqual([[3, true, ['c-a', 'm2', 'm3']]])
  })

  it('asks for trailing envelopes the final status says it lacks, after a retransmit had its chance', () => {
    let t = 1_000_000
    const rig = makeRig({ now: () => t })
    rig.executor.receive(env('s', 1, [geo('a', 0, 0)]))
    rig.executor.sequencer.expect('s', 3) // "done", lastSeq 3: seq 2 and 3 never came
    rig.executor.sequencer.retryGaps()
    expect(rig.resyncs).toEqual([]) // not at once: a retransmit may still be on its way
    t += 1600
    rig.executor.sequencer.retryGaps()
    expect(rig.resyncs).toEqual([{ sessionId: 's', lastSeq: 1 }])
    rig.executor.receive(env('s', 2, [moveTo('m2', 10)]))
    rig.executor.receive(env('s', 3, [moveTo('m3', 15)]))
    t += 5000
    rig.executor.sequencer.retryGaps()
    expect(rig.resyncs).toHaveLength(1) // complete: nothing more to ask
    expect(page(rig.editor).a!.x).toBe(15)
    rig.executor.sequencer.expect('s', 3) // a repeated status changes nothing
    t += 5000
    rig.executor.sequencer.retryGaps()
    expect(rig.resyncs).toHaveLength(1)
  })

  it('keeps sessions independent', () => {
    const rig = makeRig()
    rig.executor.receive(env('s1', 1, [geo('a', 0, 0)]))
    rig.executor.receive(env('s2', 1, [geo('b', 0, 0)]))
    rig.executor.receive(env('s2', 2, [moveTo('mb', 7, 'b')]))
    expect(page(rig.editor).b!.x).toBe(7)
  })

  it('asks every known session for what it missed on resyncAll (after a reconnect)', () => {
    const rig = makeRig()
    rig.executor.receive(env('s1', 1, [geo('a', 0, 0)]))
    rig.executor.receive(env('s2', 1, [geo('b', 0, 0)]))
    rig.executor.receive(env('s2', 2, [geo('c', 0, 0)]))
    rig.executor.resyncAll()
    expect(rig.resyncs).toEqual([
      { sessionId: 's1', lastSeq: 1 },
      { sessionId: 's2', lastSeq: 2 },
    ])
  })

  it('assembles fragmented actions and acks each envelope', () => {
    const rig = makeRig()
    const text = JSON.stringify(geo('big', 5, 6, 300, 200, { text: 'x'.repeat(50) }).params)
    const cut = [text.slice(0, 40), text.slice(40, 90), text.slice(90)]
    cut.forEach((data, index) =>
      rig.executor.receive(env('s', index + 1, [{ id: 'frag', name: 'create_shape', params: { _fragment: { index, count: 3, data } } }])),
    )
    expect(page(rig.editor).big).toMatchObject({ x: 5, y: 6, props: { w: 300, text: 'x'.repeat(50) } })
    expect(rig.acks.map((a) => a.applied)).toEqual([[], [], ['frag']])
  })
})

describe('executor: partial actions', () => {
  it('reverts the previous partial version before applying the next, and unlocks when final', () => {
    const rig = makeRig()
    rig.executor.receive(env('s', 1, [geo('a', 0, 0), geo('c', 0, 0)]))
    rig.executor.receive(env('s', 2, [{ id: 'p', name: 'create_shape', params: { id: 'b', type: 'geo', x: 0, y: 0, props: { w: 10, h: 10, text: 'He' } } }], true))
    expect(rig.editor.getShape('shape:b' as TLShapeId)!.isLocked).toBe(true)
    // a partial update of an existing shape: the next version starts from the original
    rig.executor.receive(env('s', 3, [{ id: 'u', name: 'update_shape', params: { id: 'a', x: 50 } }, moveTo('pm', 5, 'c')], true))
    expect([page(rig.editor).a!.x, page(rig.editor).c!.x]).toEqual([50, 5])
    rig.executor.receive(env('s', 4, [{ id: 'u', name: 'update_shape', params: { id: 'a', x: 70 } }, moveTo('pm', 6, 'c')], true))
    expect([page(rig.editor).a!.x, page(rig.editor).c!.x]).toEqual([70, 6])
    rig.executor.receive(env('s', 5, [{ id: 'p', name: 'create_shape', params: { id: 'b', type: 'geo', x: 0, y: 0, props: { w: 40, h: 10, text: 'Hello' } } }]))
    const b = rig.editor.getShape('shape:b' as TLShapeId)!
    expect(b.isLocked).toBe(false)
    expect(page(rig.editor).b!.props).toMatchObject({ w: 40, text: 'Hello' })
    rig.executor.receive(env('s', 6, [{ id: 'u', name: 'update_shape', params: { id: 'a', x: 90 } }, moveTo('pm', 1, 'c')]))
    expect([page(rig.editor).a!.x, page(rig.editor).c!.x]).toEqual([90, 1])
    // a finished action is never applied again
    rig.executor.receive(env('s', 7, [moveTo('pm', 1000, 'c')]))
    expect(page(rig.editor).c!.x).toBe(1)
  })

  it('undoes a partial version when its final version is a think (the steward\'s revert)', () => {
    const rig = makeRig()
    rig.executor.receive(env('s', 1, [geo('a', 0, 0)]))
    rig.executor.receive(env('s', 2, [{ id: 'p', name: 'create_shape', params: { id: 'b', type: 'geo', x: 0, y: 0, props: { w: 10, h: 10 } } }, { id: 'u', name: 'update_shape', params: { id: 'a', x: 50 } }], true))
    expect(Object.keys(page(rig.editor)).sort()).toEqual(['a', 'b'])
    rig.executor.receive(env('s', 3, [{ id: 'p', name: 'think', params: { text: 'cut off' } }, { id: 'u', name: 'think', params: { text: 'canceled' } }]))
    expect(Object.keys(page(rig.editor))).toEqual(['a'])
    expect(page(rig.editor).a!.x).toBe(0)
    expect(rig.acks[2]!.applied).toEqual(['p', 'u'])
  })

  it('removes a shape created by a partial version when the final version creates another', () => {
    const rig = makeRig()
    rig.executor.receive(env('s', 1, [{ id: 'p', name: 'create_shape', params: { id: 'x1', type: 'geo', x: 0, y: 0, props: { w: 10, h: 10 } } }], true))
    rig.executor.receive(env('s', 2, [{ id: 'p', name: 'create_shape', params: { id: 'x2', type: 'geo', x: 0, y: 0, props: { w: 10, h: 10 } } }]))
    expect(Object.keys(page(rig.editor))).toEqual(['x2'])
  })

  it('keeps the applied changes out of the undo history and marks them remote', async () => {
    const rig = makeRig()
    const sources: string[] = []
    rig.editor.store.listen((entry) => sources.push(entry.source))
    rig.executor.receive(env('s', 1, [geo('a', 0, 0)]))
    expect(rig.editor.getCanUndo()).toBe(false)
    await new Promise((r) => setTimeout(r, 50))
    expect(sources.length).toBeGreaterThan(0)
    expect(sources.every((s) => s === 'remote')).toBe(true)
  })
})

describe('executor: host rules and UI verbs', () => {
  it('moves the camera for set_viewport only on the host', () => {
    const rig = makeRig()
    rig.host.value = false
    rig.executor.receive(env('s', 1, [{ name: 'set_viewport', params: { x: 0, y: 0, w: 500, h: 400 } }]))
    expect(rig.viewports).toEqual([])
    rig.host.value = true
    rig.executor.receive(env('s', 2, [{ name: 'set_viewport', params: { x: 0, y: 0, w: 500, h: 400 } }]))
    expect(rig.viewports).toEqual([{ x: 0, y: 0, w: 500, h: 400 }])
  })

  it('in host mode a non-host tab does not apply canvas verbs but still shows todos', () => {
    const rig = makeRig({ applies: () => false })
    rig.executor.receive(env('s', 1, [geo('a', 0, 0), { id: 't', name: 'todo', params: { items: [{ id: '1', text: 'draw', status: 'todo' }] } }]))
    expect(page(rig.editor)).toEqual({})
    expect(rig.todos).toEqual([[{ id: '1', text: 'draw', status: 'todo' }]])
    expect(rig.acks[0]!.applied).toEqual(['t'])
  })
})

describe('executor: reload memory', () => {
  it('remembers applied actions and the document across a reload', () => {
    const storage = new MemStorage()
    const first = makeRig({ storage, key: 'steward:room1' })
    first.executor.receive(env('s', 1, [geo('a', 0, 0)]))
    first.executor.receive(env('s', 2, [moveTo('m1', 10)]))
    first.memory.saveNow()

    // "reload": a fresh editor restores the saved document, then the steward replays
    const editor = makeEditor()
    const saved = JSON.parse(storage.getItem('steward:room1')!)
    editor.loadSnapshot(saved.document)
    const second = makeRig({ storage, key: 'steward:room1', editor })
    second.executor.receive(env('s', 1, [geo('a', 0, 0)]))
    second.executor.receive(env('s', 2, [moveTo('m1', 10)]))
    second.executor.receive(env('s', 3, [moveTo('m2', 11)]))
    expect(page(second.editor).a!.x).toBe(11)
    second.executor.resyncAll()
    expect(second.resyncs).toEqual([{ sessionId: 's', lastSeq: 3 }])
  })

  it('keeps partial undo state across a reload', () => {
    const storage = new MemStorage()
    const first = makeRig({ storage, key: 'k' })
    first.executor.receive(env('s', 1, [geo('a', 0, 0)]))
    first.executor.receive(env('s', 2, [moveTo('pm', 5)], true))
    first.memory.saveNow()
    const editor = makeEditor()
    editor.loadSnapshot(JSON.parse(storage.getItem('k')!).document)
    const second = makeRig({ storage, key: 'k', editor })
    second.executor.receive(env('s', 3, [moveTo('pm', 7)]))
    expect(page(second.editor).a!.x).toBe(7)
  })
})
