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
