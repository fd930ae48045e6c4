import { Blob as NodeBlob } from 'node:buffer'
import { describe, expect, it, vi } from 'vitest'
import { answerContext, renderScreenshot } from '../src/connectors/context'
import { encodeFirst, ImageEncoding, type ImageFormat } from '../src/connectors/image-encoding'
import { ScreenshotCache } from '../src/connectors/screenshot-cache'
import { TOPIC_SCREENSHOT, type Box } from '../src/protocol.gen'
import { makeEditor } from './harness'

const WEBP = [0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50]
const JPEG = [0xff, 0xd8, 0xff, 0xe0]
const PNG = [0x89, 0x50, 0x4e, 0x47]
// Node's Blob: jsdom's has no arrayBuffer(), which browsers' (and the connector) use.
const blob = (bytes: number[], type: string) => new NodeBlob([new Uint8Array(bytes)], { type }) as unknown as Blob

/** An encoder as browsers behave: WebP when `webp`, else PNG for it (toBlob's fallback). */
function encoder(webp: boolean) {
  const asked: string[] = []
  const encode = async (f: ImageFormat) => {
    asked.push(f.format)
    if (f.format === 'jpeg') return blob(JPEG, 'image/jpeg')
    return webp ? blob(WEBP, 'image/webp') : blob(PNG, 'image/png')
  }
  return { asked, encode }
}

const BOX: Box = { x: 0, y: 0, w: 1280, h: 800 }

describe('screenshot encoding', () => {
  it('sends WebP where the browser encodes it', async () => {
    const enc = new ImageEncoding()
    const e = encoder(true)
    const shot = await encodeFirst(enc, e.encode)
    expect(shot?.type).toBe('image/webp')
    expect([...shot!.bytes]).toEqual(WEBP)
    expect(e.asked).toEqual(['webp'])
  })

  it('falls back to JPEG when the encoder returns another type for WebP, and remembers it', async () => {
    const enc = new ImageEncoding()
    const e = encoder(false)
    const log = vi.fn()
    const shot = await encodeFirst(enc, e.encode, log)
    expect(shot?.type).toBe('image/jpeg')
    expect([...shot!.bytes]).toEqual(JPEG)
    expect(log).toHaveBeenCalledWith(expect.stringContaining('falling back'), { asked: 'image/webp', got: 'image/png' })
    expect(enc.preferred).toBe('image/jpeg')
    await encodeFirst(enc, e.encode)
    expect(e.asked).toEqual(['webp', 'jpeg', 'jpeg']) // WebP is not tried again
  })

  it('answers nothing when no format comes out as asked, and keeps JPEG as the last resort', async () => {
    const enc = new ImageEncoding()
    const shot = await encodeFirst(enc, async () => blob(PNG, 'image/png'))
    expect(shot).toBeNull()
    expect(enc.formats().map((f) => f.format)).toEqual(['jpeg'])
  })

  it('renders with tldraw toImage: format webp first, then jpeg when the blob is not WebP', async () => {
    const editor = makeEditor()
    editor.createShape({ type: 'geo', x: 100, y: 100, props: { w: 200, h: 100 } })
    const formats: unknown[] = []
    const toImage = vi.spyOn(editor, 'toImage').mockImplementation(async (_ids, opts) => {
      formats.push(opts?.format)
      expect(opts).toMatchObject({ quality: 0.6, scale: 800 / 1280, pixelRatio: 1 })
      return { blob: opts?.format === 'webp' ? blob(PNG, 'image/png') : blob(JPEG, 'image/jpeg'), width: 800, height: 500 }
    })
    const shot = await renderScreenshot(editor, BOX, 800, new ImageEncoding())
    expect(shot?.type).toBe('image/jpeg')
    expect(formats).toEqual(['webp', 'jpeg'])
    toImage.mockRestore()
  })

  it.each([
    [true, 'image/webp', 'webp', WEBP],
    [false, 'image/jpeg', 'jpg', JPEG],
  ])('streams the screenshot with its real type (webp encodable: %s)', async (webp, mimeType, ext, bytes) => {
    const editor = makeEditor()
    editor.createShape({ type: 'geo', x: 100, y: 100, props: { w: 200, h: 100 } })
    vi.spyOn(editor, 'toImage').mockImplementation(async (_ids, opts) => ({
      blob: opts?.format === 'webp' ? (webp ? blob(WEBP, 'image/webp') : blob(PNG, 'image/png')) : blob(JPEG, 'image/jpeg'),
      width: 800,
      height: 500,
    }))
    const encoding = new ImageEncoding()
    const screenshots = new ScreenshotCache({ render: (b, m) => renderScreenshot(editor, b, m, encoding), docVersion: () => 1, viewport: () => BOX })
    const sent: Array<{ bytes: Uint8Array; opts: { topic: string; mimeType: string; name: string } }> = []
    const sender = { sendBytes: async (b: Uint8Array, opts: { topic: string; mimeType: string; name: string }) => void sent.push({ bytes: b, opts }) }
    const reply = await answerContext({ editor, sender, docVersion: () => 1, takeUserChanges: () => [], screenshots }, 'canvas-steward', {
      requestId: 'r1',
      bounds: BOX,
      want: ['screenshot'],
    } as never)
    expect(reply.streams).toEqual(['screenshot'])
    const shot = sent.find((s) => s.opts.topic === TOPIC_SCREENSHOT)!
    expect(shot.opts).toMatchObject({ mimeType, name: `r1.${ext}` })
    expect([...shot.bytes]).toEqual(bytes)
  })
})
