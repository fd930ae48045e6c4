// Connector: answers the steward's `steward.context` RPC with a small JSON reply; the
// screenshot (JPEG) and the shapes JSON follow as byte streams correlated by requestId.
import { Box as TlBox, type Editor, type TLShapeId } from 'tldraw'
import { readPage } from '../canvas/editor-canvas'
import { fromTlId, type StewardShape } from '../canvas/record'
import {
  DEFAULT_SCREENSHOT_MAX_SIZE,
  MAX_SCREENSHOT_BYTES,
  MAX_SHAPES_JSON_BYTES,
  STREAM_ATTR_REQUEST_ID,
  TOPIC_CONTEXT,
  TOPIC_SCREENSHOT,
  type Box,
  type ContextReply,
  type ContextRequest,
} from '../protocol.gen'
import type { ScreenshotCache } from './screenshot-cache'

export interface ByteSender {
  sendBytes(bytes: Uint8Array, opts: { topic: string; destinationIdentities: string[]; attributes: Record<string, string>; mimeType: string; name: string; compress: boolean }): Promise<unknown>
}

// The seed's thumbnail (≤ 800 px long side), unless the steward names a `maxSize`.
export const DEFAULT_MAX_SIZE = DEFAULT_SCREENSHOT_MAX_SIZE
// ~0.6 keeps labels legible for the model at about half the bytes of 0.8 (the stream is the
// second-longest stage after the render).
export const JPEG_QUALITY = 0.6

export function viewportBox(editor: Editor): Box {
  const b = editor.getViewportPageBounds()
  return { x: b.x, y: b.y, w: b.w, h: b.h }
}

export function selectionIds(editor: Editor): string[] {
  return editor.getSelectedShapeIds().map(fromTlId)
}

const inside = (outer: Box, inner: { x: number; y: number; w: number; h: number }) =>
  inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h

/** Shapes whose page bounds lie fully inside `bounds` (measured by the editor). */
export function shapesFullyInside(editor: Editor, bounds: Box): TLShapeId[] {
  // Top-level shapes only: a group's image already contains its children.
  return Array.from(editor.getCurrentPageShapeIds()).filter((id) => {
    const pb = editor.getShapePageBounds(id)
    return !!pb && inside(bounds, pb) && !editor.getShape(id)?.parentId.startsWith('shape:')
  })
}

export async function screenshotJpeg(editor: Editor, bounds: Box, maxSize: number): Promise<Uint8Array | null> {
  const ids = shapesFullyInside(editor, bounds)
  const longest = Math.max(bounds.w, bounds.h, 1)
  const scale = Math.min(1, maxSize / longest)
  // An empty area is still a valid answer: a blank image of the requested size.
  if (ids.length === 0) return blankJpeg(Math.max(1, Math.round(bounds.w * scale)), Math.max(1, Math.round(bounds.h * scale)))
  const { blob } = await editor.toImage(ids, {
    format: 'jpeg',
    bounds: new TlBox(bounds.x, bounds.y, bounds.w, bounds.h),
    scale,
    pixelRatio: 1,
    background: true,
    quality: JPEG_QUALITY,
    padding: 0,
  })
  return new Uint8Array(await blob.arrayBuffer())
}

async function blankJpeg(w: number, h: number): Promise<Uint8Array | null> {
  if (typeof document === 'undefined') return null
  const canvas = document.createElement('canvas')
  canvas.width = w
  canvas.height = h
  const ctx = canvas.getContext('2d')
  if (!ctx) return null
  ctx.fillStyle = '#ffffff'
  ctx.fillRect(0, 0, w, h)
  const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/jpeg', JPEG_QUALITY))
  return blob ? new Uint8Array(await blob.arrayBuffer()) : null
}

export interface ContextDeps {
  editor: Editor
  sender: ByteSender
  docVersion(): number
  takeUserChanges(): Array<Record<string, unknown>>
  /** The host's pre-rendered screenshots; without it every request renders. */
  screenshots?: ScreenshotCache
  log?: (msg: string, extra?: unknown) => void
}

/** The full context answer: streams first (awaited), then the JSON reply. The screenshot
 * stream starts first (it is the long pole); the shapes stream runs alongside it. */
export async function answerContext(deps: ContextDeps, caller: string, req: ContextRequest): Promise<ContextReply> {
  const { editor, sender } = deps
  const want = new Set(req.want ?? ['screenshot', 'shapes'])
  const viewport = viewportBox(editor)
  const bounds = req.bounds ?? viewport
  const page = readPage(editor)
  const shapes: StewardShape[] = [...page.values()]
  const inBounds = shapesFullyInside(editor, bounds).length
  const streams: Array<'screenshot' | 'shapes'> = []
  const attrs = { [STREAM_ATTR_REQUEST_ID]: req.requestId }
  const sends: Promise<unknown>[] = []
  if (want.has('screenshot')) {
    try {
      const jpeg = deps.screenshots
        ? (await deps.screenshots.get(req.bounds, req.maxSize)).jpeg
        : await screenshotJpeg(editor, bounds, req.maxSize ?? DEFAULT_MAX_SIZE)
      if (jpeg && jpeg.byteLength <= MAX_SCREENSHOT_BYTES) {
        streams.push('screenshot')
        sends.push(
          sender.sendBytes(jpeg, { topic: TOPIC_SCREENSHOT, destinationIdentities: [caller], attributes: attrs, mimeType: 'image/jpeg', name: `${req.requestId}.jpg`, compress: false }),
        )
      }
    } catch (err) {
      deps.log?.('screenshot failed', String(err))
    }
  }
  if (want.has('shapes')) {
    const json = new TextEncoder().encode(JSON.stringify(shapes))
    if (json.byteLength <= MAX_SHAPES_JSON_BYTES) {
      streams.push('shapes')
      sends.push(
        sender.sendBytes(json, { topic: TOPIC_CONTEXT, destinationIdentities: [caller], attributes: attrs, mimeType: 'application/json', name: `${req.requestId}.json`, compress: false }),
      )
    }
  }
  await Promise.all(sends)
  const reply: ContextReply = {
    requestId: req.requestId,
    viewport,
    selection: selectionIds(editor),
    docVersion: deps.docVersion(),
    counts: { shapes: shapes.length, inBounds },
    streams,
  }
  if (want.has('user_changes')) reply.userChanges = deps.takeUserChanges() as never
  return reply
}
