// Screenshot encoding: WebP where the browser can encode it (about half the bytes of JPEG at
// the same quality, so a shorter byte stream to the steward), JPEG otherwise. A browser that
// cannot encode WebP silently returns PNG from `canvas.toBlob`, so the blob's real type decides.
// Pure (no tldraw): the encoder is passed in.
import { SCREENSHOT_TYPE_JPEG, SCREENSHOT_TYPE_WEBP } from '../protocol.gen'

export type ScreenshotType = typeof SCREENSHOT_TYPE_WEBP | typeof SCREENSHOT_TYPE_JPEG

/** An encoded screenshot and its media type (the byte stream's `mimeType`). */
export interface Screenshot {
  bytes: Uint8Array
  type: ScreenshotType
}

export interface ImageFormat {
  /** tldraw `toImage` format name. */
  format: 'webp' | 'jpeg'
  type: ScreenshotType
  extension: string
}

// Best first. ~0.6 keeps labels legible for the model (the stream is the long pole).
export const IMAGE_FORMATS: readonly ImageFormat[] = [
  { format: 'webp', type: SCREENSHOT_TYPE_WEBP, extension: 'webp' },
  { format: 'jpeg', type: SCREENSHOT_TYPE_JPEG, extension: 'jpg' },
]
export const IMAGE_QUALITY = 0.6

export const extensionOf = (type: ScreenshotType): string => IMAGE_FORMATS.find((f) => f.type === type)?.extension ?? 'bin'

/** What this page's encoder turned out to produce, so a refused format is not tried again
 * (each try of a render costs a whole SVG export). */
export class ImageEncoding {
  private readonly refused = new Set<ImageFormat['format']>()

  formats(): ImageFormat[] {
    return IMAGE_FORMATS.filter((f) => !this.refused.has(f.format))
  }

  /** The encoder answered `format` with a blob of another type. */
  refuse(format: ImageFormat['format']): void {
    this.refused.add(format)
  }

  get preferred(): ScreenshotType | null {
    return this.formats()[0]?.type ?? null
  }
}

/** Shared by every render in the page. */
export const pageEncoding = new ImageEncoding()

/** Encode with the first format the encoder really produces; null when none did. */
export async function encodeFirst(
  encoding: ImageEncoding,
  encode: (format: ImageFormat) => Promise<Blob | null>,
  log?: (msg: string, extra?: unknown) => void,
): Promise<Screenshot | null> {
  for (const f of encoding.formats()) {
    const blob = await encode(f)
    if (!blob) continue // a failed encode, not a refused format: try the next one this time
    if (blob.type !== f.type) {
      // The last resort is never ruled out: a JPEG encoder that misbehaves once may not again.
      if (f !== IMAGE_FORMATS[IMAGE_FORMATS.length - 1]) encoding.refuse(f.format)
      log?.('screenshot format not encodable here, falling back', { asked: f.type, got: blob.type })
      continue
    }
    return { bytes: new Uint8Array(await blob.arrayBuffer()), type: f.type }
  }
  return null
}

// ---- byte budget ----------------------------------------------------------------------
// The warm screenshot's long pole is its byte stream (LiveKit's data channel moves ~1-2 MB/s),
// so the host fits the image under the steward's `maxBytes`: quality first (labels stay
// legible longest), then size, never below MIN_LONG_SIDE. One rasterization is re-encoded at
// each step (toImage costs seconds on big canvases, a canvas encode tens of milliseconds).
export const QUALITY_STEPS: readonly number[] = [IMAGE_QUALITY, 0.45, 0.3]
export const SCALE_STEP = 0.8
export const MIN_LONG_SIDE = 320

export interface BudgetStep {
  quality: number
  /** Of the rasterized size. */
  scale: number
}

/** The steps in the order tried: each quality at full size, then ×SCALE_STEP sizes at the
 * lowest quality down to MIN_LONG_SIDE (an image already smaller is never upscaled). */
export function budgetSteps(longSide: number): BudgetStep[] {
  const steps: BudgetStep[] = QUALITY_STEPS.map((quality) => ({ quality, scale: 1 }))
  const lowest = QUALITY_STEPS[QUALITY_STEPS.length - 1]!
  const floor = Math.min(1, MIN_LONG_SIDE / Math.max(longSide, 1))
  let scale = 1
  while (scale > floor) {
    scale = Math.max(floor, scale * SCALE_STEP)
    steps.push({ quality: lowest, scale })
  }
  return steps
}

/** A rasterized screenshot, encodable at any quality and (down)scale. */
export interface Raster {
  width: number
  height: number
  encode(type: ScreenshotType, quality: number, scale: number): Promise<Blob | null>
  close?(): void
}

/** A screenshot with the encoding chosen for it. */
export interface FittedScreenshot extends Screenshot {
  quality: number
  scale: number
  width: number
  height: number
  /** Encodes it took (each one a canvas encode). */
  tries: number
}

/** The first step's encoding within `maxBytes`, or the smallest one when none fits; logs the
 * choice. Null when no format could be encoded at all. */
export async function fitToBudget(
  encoding: ImageEncoding,
  raster: Raster,
  maxBytes: number,
  log?: (msg: string, extra?: unknown) => void,
): Promise<FittedScreenshot | null> {
  let best: FittedScreenshot | null = null
  let tries = 0
  let fits = false
  for (const step of budgetSteps(Math.max(raster.width, raster.height))) {
    tries++
    const shot = await encodeFirst(encoding, (f) => raster.encode(f.type, step.quality, step.scale), log)
    if (!shot) break // nothing encodable here: keep what an earlier step gave
    const width = Math.max(1, Math.round(raster.width * step.scale))
    const height = Math.max(1, Math.round(raster.height * step.scale))
    const got: FittedScreenshot = { ...shot, ...step, width, height, tries }
    if (!best || got.bytes.byteLength < best.bytes.byteLength) best = got
    if (got.bytes.byteLength <= maxBytes) {
      best = got
      fits = true
      break
    }
  }
  if (best) {
    best.tries = tries
    const { quality, scale, width, height, type } = best
    log?.('screenshot encoded', { type, quality, scale, width, height, bytes: best.bytes.byteLength, maxBytes, fits, tries })
  }
  return best
}

/** The size a canvas draw of `raster` at `scale` gets (shared by both canvas kinds). */
const scaled = (w: number, h: number, scale: number) => [Math.max(1, Math.round(w * scale)), Math.max(1, Math.round(h * scale))] as const

/** Decode an image blob once into a Raster that encodes through a canvas (OffscreenCanvas
 * where there is one, a DOM canvas otherwise). Null where the page cannot decode images. */
export async function rasterFromBlob(blob: Blob): Promise<Raster | null> {
  if (!canRasterize()) return null
  const bitmap = await createImageBitmap(blob)
  return {
    width: bitmap.width,
    height: bitmap.height,
    async encode(type, quality, scale) {
      const [w, h] = scaled(bitmap.width, bitmap.height, scale)
      if (typeof OffscreenCanvas !== 'undefined') {
        const canvas = new OffscreenCanvas(w, h)
        const ctx = canvas.getContext('2d')
        if (!ctx) return null
        ctx.imageSmoothingQuality = 'high'
        ctx.drawImage(bitmap, 0, 0, w, h)
        return canvas.convertToBlob({ type, quality })
      }
      const canvas = document.createElement('canvas')
      canvas.width = w
      canvas.height = h
      const ctx = canvas.getContext('2d')
      if (!ctx) return null
      ctx.imageSmoothingQuality = 'high'
      ctx.drawImage(bitmap, 0, 0, w, h)
      return new Promise<Blob | null>((r) => canvas.toBlob(r, type, quality))
    },
    close: () => bitmap.close(),
  }
}

/** True where images can be decoded and re-encoded (browsers; not jsdom or Node). */
export const canRasterize = (): boolean =>
  typeof createImageBitmap === 'function' && (typeof OffscreenCanvas !== 'undefined' || typeof document !== 'undefined')
