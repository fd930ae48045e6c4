// The shapes JSON of a context answer, gzip-compressed for its byte stream: 1,000 shapes are
// ~100-200 KB of repetitive JSON that share LiveKit's data channel (~1-2 MB/s) with the
// screenshot. The stream's mimeType says which encoding it carries (SHAPES_TYPE_GZIP or
// SHAPES_TYPE_JSON); the steward inflates gzip with a cap on the inflated size.
import { SHAPES_TYPE_GZIP, SHAPES_TYPE_JSON } from '../protocol.gen'

export interface EncodedShapes {
  bytes: Uint8Array
  mimeType: typeof SHAPES_TYPE_GZIP | typeof SHAPES_TYPE_JSON
  extension: 'json.gz' | 'json'
}

/** gzip of `bytes` with the platform's CompressionStream, or null where there is none. */
export async function gzip(bytes: Uint8Array): Promise<Uint8Array | null> {
  if (typeof CompressionStream === 'undefined') return null
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
  const reader = source.pipeThrough(new CompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>).getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/** The JSON gzip-compressed where the page can, plain JSON otherwise (or if gzip fails). */
export async function encodeShapes(json: Uint8Array, log?: (msg: string, extra?: unknown) => void): Promise<EncodedShapes> {
  try {
    const packed = await gzip(json)
    if (packed) return { bytes: packed, mimeType: SHAPES_TYPE_GZIP, extension: 'json.gz' }
  } catch (err) {
    log?.('shapes gzip failed; sending plain JSON', String(err))
  }
  return { bytes: json, mimeType: SHAPES_TYPE_JSON, extension: 'json' }
}
