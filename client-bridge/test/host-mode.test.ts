// Host mode, where the app syncs its own document (tldraw sync): the host applies the
// agent's edits as its user's changes, and takes over runs another host began.
import { describe, expect, it } from 'vitest'
import type { TLShapeId } from 'tldraw'
import { EditTracker } from '../src/connectors/edits'
import { Executor } from '../src/executor/executor'
import { ReloadMemory } from '../src/executor/memory'
import type { Ack, Resync } from '../src/protocol.gen'
import { env, geo, makeEditor } from './harness'

function hostRig() {
  const editor = makeEditor()
  const memory = new ReloadMemory(null, 'steward:host', null, 0)
  const edits = new EditTracker({ editor, relay: false, send: () => {} })
  const acks: Ack[] = []
  const resyncs: Resync[] = []
  const executor = new Executor({
    editor,
    memory,
    appliesCanvas: () => true,
    isHost: () => true,
    applyAsUser: (apply) => edits.asAgent(apply),
    sendAck: (a) => acks.push(a),
    sendResync: (r) => resyncs.push(r),
  })
  return { editor, edits, executor, acks, resyncs }
}

describe('host mode with a synced document', () => {
  it("applies the agent's edits as user changes (what tldraw sync sends), not as the user's own edits", () => {
    const { editor, edits, executor } = hostRig()
    const heard: string[] = []
    editor.store.listen((e) => heard.push(...Object.keys(e.changes.added)), { source: 'user', scope: 'document' })
    executor.receive(env('s', 1, [geo('a', 0, 0)]))
    editor.createShape({ id: 'shape:mine' as TLShapeId, type: 'geo', x: 500, y: 0 })
    editor.store.listen(() => {})() // deliver pending changes
    expect(heard).toEqual(expect.arrayContaining(['shape:a', 'shape:mine']))
    expect(edits.takeUserChanges()).toEqual([{ id: 'mine', change: 'created' }])
  })

  it('takes a session first seen part-way as applied up to there, and asks nothing for one never seen', () => {
    const { editor, executor, acks, resyncs } = hostRig()
    executor.receive(env('s', 5, [geo('b', 0, 0)]))
    expect(editor.getShape('shape:b' as TLShapeId)).toBeDefined()
    expect(acks.map((a) => a.seq)).toEqual([5])
    executor.sequencer.expect('other', 9) // a run the previous host finished
    executor.sequencer.expect('s', 7) // this tab's run: two envelopes still to come
    expect(executor.sequencer.gaps()).toEqual([['s', 5]])
    executor.sequencer.retryGaps()
    expect(resyncs).toEqual([])
  })

  it("unlocks the previous host's preview with the action's final version", () => {
    const { editor, executor } = hostRig()
    // The old host's preview, as tldraw sync brought it: locked while it streamed.
    executor.receive(env('s', 3, [geo('c', 0, 0)]))
    editor.updateShape({ id: 'shape:c' as TLShapeId, type: 'geo', isLocked: true })
    const fresh = hostRig()
    fresh.editor.store.mergeRemoteChanges(() => fresh.editor.store.put([editor.getShape('shape:c' as TLShapeId)!]))
    fresh.executor.receive(env('s', 4, [geo('c', 10, 0)]))
    const shape = fresh.editor.getShape('shape:c' as TLShapeId)!
    expect([shape.isLocked, shape.x]).toEqual([false, 10])
  })
})
