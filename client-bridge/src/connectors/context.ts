// Connector: answers the steward's `steward.context` RPC with a small JSON reply; the
// screenshot (WebP, or JPEG where the browser cannot encode WebP; the stream's mimeType says
// which; fitted under the request's `maxBytes`) and the shapes JSON (gzip-compressed where the
// page has CompressionStream) follow as byte streams correlated by requestId.
import { Box as TlBox, type Editor, type TLShapeId } from 'tldraw'
import { readPage } from '../canvas/editor-canvas'
import { fromTlId, type StewardShape } from '../canvas/record'
import {
  DEFAULT_SCREENSHOT_MAX_BYTES,
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
import {
  canRasterize,
  encodeFirst,
  extensionOf,
  fitToBudget,
  IMAGE_QUALITY,
  pageEncoding,
  rasterFromBlob,
  type ImageEncoding,
  type Raster,
  type Screenshot,
} from './image-encoding'
import { encodeShapes } from './shapes-encoding'
import type { ScreenshotCache } from './screenshot-cache'

export interface ByteSender {
  sendBytes(bytes: Uint8Array, opts: { topic: string; destinationIdentities: string[]; attributes: Record<string, string>; mimeType: string; name: string; compress: boolean }): Promise<unknown>
}

// The seed's thumbnail (≤ 800 px long side), unless the steward names a `maxSize`.
export const DEFAULT_MAX_SIZE = DEFAULT_SCREENSHOT_MAX_SIZE

export function viewportBox(editor: Editor): Box {
  const b = editor.getViewportPageBounds()
  return { x: b.x, y: b.y, w: b.w, h: b.h }
}

export function selectionIds(editor: Editor): string[] {
  return editor.getSelectedShapeIds().map(fromTlId)
}

/** Whether two boxes overlap (the steward's `Rect.intersects`: a shape only touching the
 * edge adds no pixels); a box inside the other overlaps it too. */
export const overlaps = (a: Box, b: { x: number; y: number; w: number; h: number }) =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h

/** Top-level shapes whose page bounds overlap `bounds` (measured by the editor): the shapes
 * the screenshot of `bounds` draws, clipped to it, and the steward lists as in view. */
export function shapesInBounds(editor: Editor, bounds: Box): TLShapeId[] {
  // Top-level shapes only: a group's image already contains its children.
  return Array.from(editor.getCurrentPageShapeIds()).filter((id) => {
    const pb = editor.getShapePageBounds(id)
    return !!pb && overlaps(bounds, pb) && !editor.getShape(id)?.parentId.startsWith('shape:')
  })
}

export interface RenderOptions {
  /** Byte budget of the encoded image (default DEFAULT_SCREENSHOT_MAX_BYTES). */
  maxBytes?: number
  /** Decodes tldraw's lossless render for re-encoding; null: none here (encode directly). */
  rasterize?: ((blob: Blob) => Promise<Raster | null>) | null
}

/** The screenshot of `bounds`, long side at most `maxSize`: WebP where this browser encodes
 * it, JPEG otherwise (`encoding` remembers which), fitted under `maxBytes` by lowering
 * quality, then scale. tldraw renders once (lossless PNG); each step re-encodes that raster. */
export async function renderScreenshot(
  editor: Editor,
  bounds: Box,
  maxSize: number,
  encoding: ImageEncoding = pageEncoding,
  log?: (msg: string, extra?: unknown) => void,
  opts: RenderOptions = {},
): Promise<Screenshot | null> {
  const ids = shapesInBounds(editor, bounds)
  const longest = Math.max(bounds.w, bounds.h, 1)
  const scale = Math.min(1, maxSize / longest)
  // An empty area is still a valid answer: a blank image of the requested size.
  if (ids.length === 0) return blankImage(Math.max(1, Math.round(bounds.w * scale)), Math.max(1, Math.round(bounds.h * scale)), encoding, log)
  const box = new TlBox(bounds.x, bounds.y, bounds.w, bounds.h)
  const rasterize = opts.rasterize === undefined ? (canRasterize() ? rasterFromBlob : null) : opts.rasterize
  if (rasterize) {
    const png = await editor.toImage(ids, { format: 'png', bounds: box, scale, pixelRatio: 1, background: true, padding: 0 })
    const raster = await rasterize(png.blob)
    if (raster) {
      try {
        return await fitToBudget(encoding, raster, opts.maxBytes ?? DEFAULT_SCREENSHOT_MAX_BYTES, log)
      } finally {
        raster.close?.()
      }
    }
    log?.('screenshot could not be decoded for the byte budget; encoding without it')
  }
  return encodeFirst(
    encoding,
    async ({ format }) =>
      (await editor.toImage(ids, { format, bounds: box, scale, pixelRatio: 1, background: true, quality: IMAGE_QUALITY, padding: 0 })).blob,
    log,
  )
}

async function blankImage(w: number, h: number, encoding: ImageEncoding, log?: (msg: string, extra?: unknown) => void): Promise<Screenshot | null> {
  if (typeof document === 'undefined') return null
  const canvas = document.createElement('canvas')
  canvas.width = w
  canvas.height = h
  const ctx = canvas.getContext('2d')
  if (!ctx) return null
  ctx.fillStyle = '#ffffff'
  ctx.fillRect(0, 0, w, h)
  return encodeFirst(encoding, ({ type }) => new Promise<Blob | null>((r) => canvas.toBlob(r, type, IMAGE_QUALITY)), log)
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
  const inBounds = shapesInBounds(editor, bounds).length
  const streams: Array<'screenshot' | 'shapes'> = []
  const attrs = { [STREAM_ATTR_REQUEST_ID]: req.requestId }
  const sends: Promise<unknown>[] = []
  if (want.has('screenshot')) {
    try {
      const maxBytes = req.maxBytes ?? DEFAULT_SCREENSHOT_MAX_BYTES
      const shot = deps.screenshots
        ? (await deps.screenshots.get(req.bounds, req.maxSize, maxBytes)).shot
        : await renderScreenshot(editor, bounds, req.maxSize ?? DEFAULT_MAX_SIZE, pageEncoding, deps.log, { maxBytes })
      if (shot && shot.bytes.byteLength <= MAX_SCREENSHOT_BYTES) {
        streams.push('screenshot')
        const name = `${req.requestId}.${extensionOf(shot.type)}`
        sends.push(
          sender.sendBytes(shot.bytes, { topic: TOPIC_SCREENSHOT, destinationIdentities: [caller], attributes: attrs, mimeType: shot.type, name, compress: false }),
        )
      }
    } catch (err) {
      deps.log?.('screenshot failed', String(err))
    }
  }
  if (want.has('shapes')) {
    const json = new TextEncoder().encode(JSON.stringify(shapes))
    // The cap is on the JSON itself: the steward refuses more once inflated.
    if (json.byteLength <= MAX_SHAPES_JSON_BYTES) {
      const encoded = await encodeShapes(json, deps.log)
      streams.push('shapes')
      sends.push(
        sender.sendBytes(encoded.bytes, {
          topic: TOPIC_CONTEXT,
          destinationIdentities: [caller],
          attributes: attrs,
          mimeType: encoded.mimeType,
          name: `${req.requestId}.${encoded.extension}`,
          compress: false,
        }),
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
