// Connector (relay mode): the user's own edits go to the steward on `canvas:edit`; the
// steward sequences them into the room's stream for every browser. Also tracks what the
// user changed since the last context request and the document version.
import type { Editor, TLRecord, TLShapeId } from 'tldraw'
import { fromTlId, toSteward } from '../canvas/record'
import { MAX_EDIT_RECORDS, type CanvasEdit } from '../protocol.gen'

// Keep each message well under LiveKit's 64 kB packet cap.
const MAX_EDIT_BYTES = 48_000
const FLUSH_MS = 60
// The relay's pace: after a flush of N bytes the next waits N / this (at least FLUSH_MS).
// The steward strikes a sender past its inbound allowance (512 KiB in any second, 2 MiB in
// ten), so dragging a hundred notes, which changes every one of them each frame, must not
// resend them all every 60 ms. The shapes changed meanwhile are coalesced: the last state of
// each goes in the next flush, so nothing is lost, other tabs just see fewer frames.
export const RELAY_BYTES_PER_S = 128 * 1024

export interface EditTrackerOptions {
  editor: Editor
  relay: boolean
  send(edit: CanvasEdit): void
  /** Bytes per second the relay may average (default RELAY_BYTES_PER_S). */
  bytesPerS?: number
}

export class EditTracker {
  docVersion = 0
  private changed = new Set<TLShapeId>()
  private removed = new Set<TLShapeId>()
  private userChanges = new Map<string, string>()
  private timer: ReturnType<typeof setTimeout> | null = null
  // When the relay's pace lets the next flush go (Date.now() ms).
  private paceUntil = 0
  private unlisten: Array<() => void> = []
  private agentWriting = false

  constructor(private readonly opts: EditTrackerOptions) {
    const { editor } = opts
    this.unlisten.push(editor.store.listen(() => void this.docVersion++, { scope: 'document' }))
    this.unlisten.push(
      editor.store.listen(
        (entry) => {
          if (this.agentWriting) return
          const { added, updated, removed } = entry.changes
          for (const r of Object.values(added) as TLRecord[]) this.note(r, 'created')
          for (const [, r] of Object.values(updated) as Array<[TLRecord, TLRecord]>) this.note(r, 'updated')
          for (const r of Object.values(removed) as TLRecord[]) this.note(r, 'deleted')
          this.schedule()
        },
        { source: 'user', scope: 'document' },
      ),
    )
  }

  private note(r: TLRecord, kind: string) {
    if (r.typeName === 'shape') {
      const id = r.id as TLShapeId
      if (kind === 'deleted') {
        this.removed.add(id)
        this.changed.delete(id)
      } else {
        this.changed.add(id)
        this.removed.delete(id)
      }
      const prev = this.userChanges.get(id)
      this.userChanges.set(id, prev === 'created' && kind === 'updated' ? 'created' : kind)
    } else if (r.typeName === 'binding') {
      // An arrow's binding is part of the arrow's steward record.
      const from = (r as unknown as { fromId: TLShapeId }).fromId
      if (from) this.changed.add(from)
    }
  }

  private schedule() {
    if (!this.opts.relay || this.timer) return
    this.timer = setTimeout(
      () => {
        this.timer = null
        this.flush()
      },
      Math.max(FLUSH_MS, this.paceUntil - Date.now()),
    )
  }

  /** Sends what changed since the last flush; returns the bytes sent. */
  flush(): number {
    const { editor } = this.opts
    const put: Array<Record<string, unknown>> = []
    for (const id of this.changed) {
      const shape = editor.getShape(id)
      if (shape) put.push(toSteward(editor, shape) as unknown as Record<string, unknown>)
    }
    const remove = [...this.removed].map(fromTlId)
    this.changed.clear()
    this.removed.clear()
    // Split into messages that fit one data packet.
    let batch: CanvasEdit = { put: [], remove: [] }
    let size = 0
    let sent = 0
    const emit = () => {
      if (batch.put!.length || batch.remove!.length) this.opts.send(batch)
      batch = { put: [], remove: [] }
      sent += size
      size = 0
    }
    for (const rec of put) {
      const n = JSON.stringify(rec).length
      if (size + n > MAX_EDIT_BYTES || batch.put!.length >= MAX_EDIT_RECORDS) emit()
      batch.put!.push(rec as never)
      size += n
    }
    for (const id of remove) {
      if (size + id.length > MAX_EDIT_BYTES || batch.remove!.length >= MAX_EDIT_RECORDS) emit()
      batch.remove!.push(id)
      size += id.length + 3
    }
    emit()
    this.paceUntil = Date.now() + (sent * 1000) / (this.opts.bytesPerS ?? RELAY_BYTES_PER_S)
    return sent
  }

  /** Runs `apply`, whose changes are the agent's although made as the user's (host mode: so
   *  the app's sync sends them), leaving them out of the user's edits. Store listeners hear
   *  changes once per frame; subscribing delivers the pending ones at once. */
  asAgent(apply: () => void) {
    const deliver = () => this.opts.editor.store.listen(() => {})()
    deliver()
    this.agentWriting = true
    try {
      apply()
      deliver()
    } finally {
      this.agentWriting = false
    }
  }

  /** What the user changed since the previous call (for the context reply). */
  takeUserChanges(): Array<Record<string, unknown>> {
    const out = [...this.userChanges].map(([id, change]) => ({ id: fromTlId(id), change }))
    this.userChanges.clear()
    return out
  }

  dispose() {
    if (this.timer) clearTimeout(this.timer)
    this.unlisten.forEach((u) => u())
  }
}
