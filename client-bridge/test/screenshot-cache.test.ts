import { describe, expect, it } from 'vitest'
import { toRichText } from 'tldraw'
import { EditTracker } from '../src/connectors/edits'
import type { Screenshot } from '../src/connectors/image-encoding'
import { ScreenshotCache } from '../src/connectors/screenshot-cache'
import type { Box } from '../src/protocol.gen'
import { makeEditor } from './harness'

const VIEW: Box = { x: 0, y: 0, w: 1280, h: 800 }

/** A cache whose renders and idle timer the test resolves by hand. */
function rig() {
  const doc = { version: 1 }
  const renders: Array<{ bounds: Box; maxSize: number; resolve: (shot: Screenshot) => void }> = []
  const timers: Array<() => void> = []
  let view = VIEW
  const cache = new ScreenshotCache({
    render: (bounds, maxSize) => new Promise((resolve) => renders.push({ bounds, maxSize, resolve })),
    docVersion: () => doc.version,
    viewport: () => view,
    setTimer: (fn) => timers.push(fn),
    clearTimer: () => timers.splice(0),
  })
  const fireIdle = () => timers.splice(0).forEach((fn) => fn())
  const settle = () => new Promise((r) => setTimeout(r, 0))
  return { cache, doc, renders, fireIdle, settle, setView: (b: Box) => (view = b) }
}

const webp = (n: number): Screenshot => ({ bytes: new Uint8Array([0x52, 0x49, 0x46, 0x46, n]), type: 'image/webp' })

describe('screenshot cache', () => {
  it('pre-renders the viewport at 800 (the thumbnail default) after a quiet spell and answers from the cache', async () => {
    const r = rig()
    r.cache.start()
    r.fireIdle()
    expect(r.renders).toHaveLength(1)
    expect(r.renders[0]).toMatchObject({ bounds: VIEW, maxSize: 800 })
    r.renders[0]!.resolve(webp(1))
    await r.settle()
    const got = await r.cache.get(undefined, undefined)
    expect(got.source).toBe('cache')
    expect(got.shot).toEqual(webp(1))
    expect(r.renders).toHaveLength(1)
  })

  it('renders again when the document, the bounds or the size differ, and caches that', async () => {
    const r = rig()
    r.cache.start()
    r.fireIdle()
    r.renders[0]!.resolve(webp(1))
    await r.settle()

    r.doc.version = 2 // the document changed
    const p = r.cache.get(undefined, undefined)
    expect(r.renders).toHaveLength(2)
    r.renders[1]!.resolve(webp(2))
    expect(await p).toEqual({ shot: webp(2), source: 'render' })
    expect((await r.cache.get(undefined, undefined)).source).toBe('cache')

    const other = { x: 10, y: 0, w: 100, h: 100 }
    const q = r.cache.get(other, 1280) // other bounds and size
    expect(r.renders[2]).toMatchObject({ bounds: other, maxSize: 1280 })
    r.renders[2]!.resolve(webp(3))
    expect((await q).source).toBe('render')
    void r.cache.get(VIEW, 1280) // same size, bounds differ again: a new render
    expect(r.renders).toHaveLength(4)
  })

  it('discards a render that finishes after the document changed, and pre-renders again', async () => {
    const r = rig()
    r.cache.start()
    r.fireIdle()
    r.doc.version = 2 // an edit while the pre-render runs
    r.renders[0]!.resolve(webp(1))
    await r.settle()
    expect(r.cache.stats.discarded).toBe(1)
    r.fireIdle() // the re-armed quiet spell
    expect(r.renders).toHaveLength(2)
    const p = r.cache.get(undefined, undefined) // joins the pre-render already under way
    r.renders[1]!.resolve(webp(2))
    expect(await p).toEqual({ shot: webp(2), source: 'joined' })
    expect(r.renders).toHaveLength(2)
  })

  it('pre-renders with the last request size and bounds, never two at once, and stops with the host role', async () => {
    const r = rig()
    r.cache.start()
    const p = r.cache.get(undefined, 1280)
    r.fireIdle() // a render is already under way: no second one
    expect(r.renders).toHaveLength(1)
    r.renders[0]!.resolve(webp(1))
    await p
    r.setView({ x: 50, y: 50, w: 640, h: 400 }) // the user panned
    r.cache.changed()
    r.fireIdle()
    expect(r.renders[1]).toMatchObject({ bounds: { x: 50, y: 50, w: 640, h: 400 }, maxSize: 1280 })
    r.renders[1]!.resolve(webp(2))
    await r.settle()
    r.cache.stop()
    r.doc.version = 3
    r.cache.changed()
    r.fireIdle()
    expect(r.renders).toHaveLength(2)
    expect(r.cache.active).toBe(false)
  })

  it('a real Editor: subscribing flushes pending history, so the version is current at once', () => {
    const editor = makeEditor()
    const edits = new EditTracker({ editor, relay: false, send: () => {} })
    const before = edits.docVersion
    editor.createShape({ type: 'geo', x: 0, y: 0, props: { w: 10, h: 10, richText: toRichText('a') } })
    editor.store.listen(() => {})()
    expect(edits.docVersion).toBeGreaterThan(before)
    const after = edits.docVersion
    editor.setCamera({ x: 100, y: 100, z: 1 }) // a session change is not a document change
    editor.store.listen(() => {})()
    expect(edits.docVersion).toBe(after)
    edits.dispose()
  })
})
