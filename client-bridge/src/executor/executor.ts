// Executors: apply action envelopes to the tldraw editor exactly once, in seq order, with
// partial-action reverts, then ack what was applied.
import type { Editor, TLRecord, TLShape } from 'tldraw'
import { UI_ONLY_VERBS } from '../canvas/apply'
import { applyToEditor } from '../canvas/editor-canvas'
import { toTlId } from '../canvas/record'
import { withSeededRandom } from '../canvas/seeded'
import type { Ack, ActionEnvelope, Box, Resync, WireAction } from '../protocol.gen'
import { AckHolder } from './acks'
import type { ReloadMemory } from './memory'
import { Sequencer } from './sequencer'

export const FRAGMENT_KEY = '_fragment'

interface Diff {
  added: Record<string, TLRecord>
  updated: Record<string, [TLRecord, TLRecord]>
  removed: Record<string, TLRecord>
}

export interface TodoItem {
  id: string
  text: string
  status: string
}

/** What the executor does with the verbs that do not touch the canvas. */
export interface UiSink {
  think?(sessionId: string, text: string): void
  addDetail?(sessionId: string, text: string): void
  todo?(sessionId: string, items: TodoItem[]): void
  setViewport?(box: Box): void
  /** A run's final (not preview) action created or changed these shapes in this tab. */
  drew?(sessionId: string, shapeIds: string[]): void
}

export interface ExecutorDeps {
  editor: Editor
  memory: ReloadMemory
  /** Whether envelopes change the canvas (the bridge: always; the steward chooses who gets them). */
  appliesCanvas(): boolean
  isHost(): boolean
  /** Host mode: the app's own sync (tldraw sync) carries the document to the other tabs, and
   *  it sends only changes made as the user's. Applies run through this (which keeps them out
   *  of the user's own edits); without it they are remote changes. The sequencer also takes a
   *  session first seen part-way as applied up to there (by the previous host). */
  applyAsUser?: (apply: () => void) => void
  sendAck(ack: Ack): void
  sendResync(resync: Resync): void
  ui?: UiSink
  now?: () => number
  log?: (msg: string, extra?: unknown) => void
}

const reverse = (d: Diff): Diff => ({
  added: d.removed,
  removed: d.added,
  updated: Object.fromEntries(Object.entries(d.updated).map(([k, [a, b]]) => [k, [b, a]])),
})

export class Executor {
  readonly sequencer: Sequencer
  /** Ids of every action applied, in order (tests and the UI read it). */
  readonly appliedLog: string[] = []
  // While a packet's envelopes are applied: the ack each session gets when it is done.
  private heldAcks: AckHolder | null = null

  constructor(private readonly deps: ExecutorDeps) {
    this.sequencer = new Sequencer(deps.memory, {
      apply: (env) => this.applyEnvelope(env),
      duplicate: (env) => this.ackDuplicate(env),
      requestResync: (sessionId, lastSeq) => deps.sendResync({ sessionId, lastSeq }),
    }, deps.now, { sharedDocument: deps.applyAsUser !== undefined })
  }

  receive(env: ActionEnvelope) {
    this.receiveAll([env])
  }

  /**
   * The envelopes of one packet, in order. Envelopes are applied in seq order and duplicates
   * lie below the last applied, so one cumulative ack per session covers every envelope
   * applied (or re-acked) meanwhile, a filled gap's included.
   */
  receiveAll(envelopes: ActionEnvelope[]) {
    if (this.heldAcks) {
      for (const env of envelopes) this.sequencer.push(env)
      return
    }
    const held = (this.heldAcks = new AckHolder((ack) => this.deps.sendAck(ack)))
    try {
      for (const env of envelopes) this.sequencer.push(env)
    } finally {
      this.heldAcks = null
      held.flush()
    }
  }

  private ack(ack: Ack) {
    if (!this.heldAcks) return this.deps.sendAck(ack)
    this.heldAcks.add(ack)
  }

  resyncAll() {
    this.sequencer.resyncAll()
  }

  private now() {
    return (this.deps.now ?? Date.now)()
  }

  private ackDuplicate(env: ActionEnvelope) {
    // Already applied earlier (a retransmit or a replay): the steward only needs the ack.
    const applied = env.actions.filter((a) => this.deps.memory.isDone(env.sessionId, a.id)).map((a) => a.id)
    this.ack({ sessionId: env.sessionId, seq: env.seq, applied, appliedAt: this.now() / 1000 })
  }

  private assemble(sessionId: string, action: WireAction): Record<string, unknown> | null {
    const params = (action.params ?? {}) as Record<string, unknown>
    const frag = params[FRAGMENT_KEY] as { index: number; count: number; data: string } | undefined
    if (!frag || Object.keys(params).length !== 1) return params
    const key = `${sessionId}\u0000${action.id}`
    const fragments = this.deps.memory.state.fragments
    if (frag.index === 0) fragments[key] = []
    const parts = (fragments[key] ??= [])
    if (frag.index !== parts.length) {
      delete fragments[key]
      this.deps.log?.('fragment out of order', { action: action.id })
      return null
    }
    parts.push(String(frag.data))
    if (frag.index + 1 < frag.count) return null
    delete fragments[key]
    try {
      const full = JSON.parse(parts.join('')) as unknown
      return full && typeof full === 'object' && !Array.isArray(full) ? (full as Record<string, unknown>) : null
    } catch {
      this.deps.log?.('fragment is not JSON', { action: action.id })
      return null
    }
  }

  private applyEnvelope(env: ActionEnvelope) {
    const { editor, memory } = this.deps
    const partial = env.partial === true
    const applied: string[] = []
    const canvas = this.deps.appliesCanvas()
    for (const action of env.actions) {
      if (memory.isDone(env.sessionId, action.id)) continue
      const params = this.assemble(env.sessionId, action)
      if (params === null) continue
      const full = { id: action.id, name: action.name, params } as WireAction
      try {
        if (UI_ONLY_VERBS.has(action.name)) {
          // A final `think` under a partial's id is how the steward reverts a preview.
          if (canvas) this.revertPartial(env.sessionId, action.id)
          this.applyUi(env.sessionId, full)
        } else if (canvas) withSeededRandom(`${env.sessionId}/${env.seq}/${action.id}`, () => this.applyCanvas(env.sessionId, full, partial))
        else continue
      } catch (err) {
        this.deps.log?.('action failed', { action: action.id, name: action.name, err: String(err) })
        continue
      }
      if (!partial) memory.markDone(env.sessionId, action.id)
      applied.push(action.id)
      this.appliedLog.push(action.id)
    }
    memory.touch()
    this.ack({ sessionId: env.sessionId, seq: env.seq, applied, appliedAt: this.now() / 1000 })
  }

  /** Relay mode: a remote change, so the relay listener does not send it back as the user's
   *  edit. Host mode: the user's, so the app's sync sends it to the other tabs. */
  private write(apply: () => void) {
    if (this.deps.applyAsUser) this.deps.applyAsUser(apply)
    else this.deps.editor.store.mergeRemoteChanges(apply)
  }

  /** Undo what the previous partial version of this action changed, if it is in flight. */
  private undoPartial(key: string): boolean {
    const { editor, memory } = this.deps
    const previous = memory.state.partials[key] as Diff | undefined
    if (!previous) return false
    editor.store.applyDiff(reverse(previous) as never)
    delete memory.state.partials[key]
    return true
  }

  /** A run taken over from another host: its preview of this shape (locked while it streams)
   *  is in the shared document, not in this tab's memory, so the final version unlocks it. */
  private unlockPreview(stewardId: string) {
    const shape = stewardId ? this.deps.editor.getShape(toTlId(stewardId)) : undefined
    if (shape?.isLocked) this.deps.editor.updateShape({ id: shape.id, type: shape.type, isLocked: false })
  }

  private revertPartial(sessionId: string, actionId: string) {
    const { editor, memory } = this.deps
    const key = `${sessionId}\u0000${actionId}`
    if (!memory.state.partials[key]) return
    this.write(() => {
      editor.run(() => this.undoPartial(key), { history: 'ignore', ignoreShapeLock: true })
    })
  }

  private applyCanvas(sessionId: string, action: WireAction, partial: boolean) {
    const { editor, memory } = this.deps
    const key = `${sessionId}\u0000${action.id}`
    this.write(() => {
      editor.run(
        () => {
          const ownPreview = this.undoPartial(key)
          const diff = editor.store.extractingChanges(() => {
            applyToEditor(editor, action)
          }) as unknown as Diff
          if (!partial && !ownPreview && action.name === 'create_shape' && this.sequencer.adopted.has(sessionId)) {
            this.unlockPreview(String(action.params?.id ?? ''))
          }
          if (!partial && this.deps.ui?.drew) {
            const ids = [...Object.values(diff.added), ...Object.values(diff.updated).map(([, to]) => to)]
              .filter((r) => r.typeName === 'shape')
              .map((r) => r.id as string)
            if (ids.length) this.deps.ui.drew(sessionId, ids)
          }
          if (partial) {
            const lockedDiff = editor.store.extractingChanges(() => {
              const added = Object.values(diff.added).filter((r) => r.typeName === 'shape') as TLShape[]
              if (added.length) {
                editor.updateShapes(added.map((s) => ({ id: s.id, type: s.type, isLocked: true })))
              }
            }) as unknown as Diff
            memory.state.partials[key] = squash(diff, lockedDiff)
          }
        },
        { history: 'ignore', ignoreShapeLock: true },
      )
    })
  }

  private applyUi(sessionId: string, action: WireAction) {
    const p = (action.params ?? {}) as Record<string, unknown>
    const ui = this.deps.ui
    switch (action.name) {
      case 'think':
        ui?.think?.(sessionId, String(p.text ?? ''))
        break
      case 'add_detail':
        ui?.addDetail?.(sessionId, String(p.text ?? ''))
        break
      case 'todo':
        ui?.todo?.(
          sessionId,
          (Array.isArray(p.items) ? p.items : []).map((raw) => {
            const it = (raw ?? {}) as Record<string, unknown>
            return { id: String(it.id ?? ''), text: String(it.text ?? ''), status: String(it.status ?? 'todo') }
          }),
        )
        break
      case 'set_viewport': {
        // Camera moves belong to the host only: other people keep their own view.
        if (!this.deps.isHost()) break
        const box = { x: Number(p.x), y: Number(p.y), w: Number(p.w), h: Number(p.h) }
        if ([box.x, box.y, box.w, box.h].every(Number.isFinite) && box.w > 0 && box.h > 0) {
          ui?.setViewport ? ui.setViewport(box) : this.deps.editor.zoomToBounds(box, { animation: { duration: 200 } })
        }
        break
      }
    }
  }
}

/** Two diffs applied one after the other, as one diff (for an exact revert). */
function squash(a: Diff, b: Diff): Diff {
  const out: Diff = {
    added: { ...a.added },
    updated: { ...a.updated },
    removed: { ...a.removed },
  }
  for (const [id, rec] of Object.entries(b.added)) out.added[id] = rec
  for (const [id, [from, to]] of Object.entries(b.updated)) {
    if (out.added[id]) out.added[id] = to
    else if (out.updated[id]) out.updated[id] = [out.updated[id]![0], to]
    else out.updated[id] = [from, to]
  }
  for (const [id, rec] of Object.entries(b.removed)) {
    if (out.added[id]) delete out.added[id]
    else {
      const before = out.updated[id]?.[0] ?? rec
      delete out.updated[id]
      out.removed[id] = before
    }
  }
  return out
}
