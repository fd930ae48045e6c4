// The relay's pace: a long drag of many shapes stays within the steward's inbound allowance
// (512 KiB in any second, 2 MiB in ten) and every shape's last position still goes out.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { TLShapeId } from 'tldraw'
import { EditTracker, RELAY_BYTES_PER_S } from '../src/connectors/edits'
import type { CanvasEdit } from '../src/protocol.gen'
import { makeEditor } from './harness'

const BURST = 512 * 1024
const BUDGET_10S = 2 * 1024 * 1024

function bytesIn(sent: Array<[number, number]>, from: number, ms: number) {
  return sent.filter(([t]) => t >= from && t < from + ms).reduce((n, [, b]) => n + b, 0)
}

describe('relaying the user edits', () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }))
  afterEach(() => vi.useRealTimers())

  it('paces a 12 s drag of 300 notes under the inbound allowance and sends where each ended', () => {
    const editor = makeEditor()
    const ids = Array.from({ length: 300 }, (_, i) => `shape:n${i}` as TLShapeId)
    editor.createShapes(ids.map((id, i) => ({ id, type: 'note', x: (i % 20) * 220, y: Math.floor(i / 20) * 220 })))
    const sent: Array<[number, number]> = []
    const last = new Map<string, number>()
    const edits = new EditTracker({
      editor,
      relay: true,
      send: (edit: CanvasEdit) => {
        sent.push([Date.now(), JSON.stringify(edit).length])
        for (const r of edit.put ?? []) last.set(String((r as { id: unknown }).id), Number((r as { x: unknown }).x))
      },
    })
    vi.advanceTimersByTime(5_000) // the creation goes out first
    sent.length = 0
    last.clear()
    const start = Date.now()
    for (let frame = 1; frame <= 750; frame++) {
      // one drag frame every 16 ms: every note moves one unit right
      editor.updateShapes(ids.map((id) => ({ id, type: 'note', x: editor.getShape(id)!.x + 1 })))
      editor.store.listen(() => {})() // deliver the frame's changes, as a rendered frame does
      vi.advanceTimersByTime(16)
    }
    vi.advanceTimersByTime(10_000)
    const total = sent.reduce((n, [, b]) => n + b, 0)
    expect(total).toBeGreaterThan(BURST) // unpaced, this drag is 100 MB
    for (let t = start; t < start + 20_000; t += 100) {
      expect(bytesIn(sent, t, 1_000)).toBeLessThanOrEqual(BURST)
      expect(bytesIn(sent, t, 10_000)).toBeLessThanOrEqual(BUDGET_10S)
    }
    expect(last.size).toBe(300)
    for (const id of ids) expect(last.get(id.slice('shape:'.length))).toBe(editor.getShape(id)!.x)
    edits.dispose()
  })

  it('sends a lone edit after a big paste at once, and a small change within 60 ms', () => {
    const editor = makeEditor()
    const sent: number[] = []
    const edits = new EditTracker({ editor, relay: true, send: () => sent.push(Date.now()) })
    const ids = Array.from({ length: 20 }, (_, i) => `shape:p${i}` as TLShapeId)
    editor.createShapes(ids.map((id, i) => ({ id, type: 'geo', x: i * 10, y: 0 })))
    editor.store.listen(() => {})()
    vi.advanceTimersByTime(60)
    expect(sent.length).toBe(1)
    vi.advanceTimersByTime(RELAY_BYTES_PER_S) // long after: no pace left to wait
    editor.updateShape({ id: ids[0]!, type: 'geo', x: 999 })
    editor.store.listen(() => {})()
    vi.advanceTimersByTime(60)
    expect(sent.length).toBe(2)
    edits.dispose()
  })
})
