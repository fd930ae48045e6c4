import { Blob as NodeBlob } from 'node:buffer'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it, vi } from 'vitest'
import { answerContext, renderScreenshot } from '../src/connectors/context'
import { budgetSteps, fitToBudget, ImageEncoding, MIN_LONG_SIDE, type Raster, type ScreenshotType } from '../src/connectors/image-encoding'
import { ScreenshotCache } from '../src/connectors/screenshot-cache'
import { encodeShapes } from '../src/connectors/shapes-encoding'
import { DEFAULT_SCREENSHOT_MAX_BYTES, TOPIC_CONTEXT, TOPIC_SCREENSHOT, type Box } from '../src/protocol.gen'
import { makeEditor } from './harness'

const WEBP = [0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50]
const JPEG = [0xff, 0xd8, 0xff, 0xe0]
const PNG = [0x89, 0x50, 0x4e, 0x47]
const blob = (head: number[], size: number, type: string) => {
  const bytes = new Uint8Array(Math.max(size, head.length))
  bytes.set(head)
  return new NodeBlob([bytes], { type }) as unknown as Blob
}

/** A raster whose encodes weigh `full` bytes at quality 0.6 and full size, proportional to
 * quality and to area (as lossy encoders roughly do); `webp: false` answers PNG for WebP. */
function fakeRaster(width: number, height: number, full: number, webp = true) {
  const encodes: Array<{ type: string; quality: number; scale: number }> = []
  const closed = { value: false }
  const raster: Raster = {
    width,
    height,
    async encode(type: ScreenshotType, quality: number, scale: number) {
      encodes.push({ type, quality, scale })
      const size = Math.round((full * quality * scale * scale) / 0.6)
      if (type === 'image/webp') return webp ? blob(WEBP, size, 'image/webp') : blob(PNG, size * 3, 'image/png')
      return blob(JPEG, size, 'image/jpeg')
    },
    close: () => void (closed.value = true),
  }
  return { raster, encodes, closed }
}

const BOX: Box = { x: 0, y: 0, w: 1280, h: 800 }

describe('screenshot byte budget', () => {
  it('steps quality down first, then scale by 0.8 down to the minimum long side', () => {
    const steps = budgetSteps(800)
    expect(steps.slice(0, 4)).toEqual([
      { quality: 0.6, scale: 1 },
      { quality: 0.45, scale: 1 },
      { quality: 0.3, scale: 1 },
      { quality: 0.3, scale: 0.8 },
    ])
    const last = steps[steps.length - 1]!
    expect(last.scale * 800).toBeCloseTo(MIN_LONG_SIDE)
    expect(steps.every((s, i) => i === 0 || s.scale <= steps[i - 1]!.scale)).toBe(true)
    expect(budgetSteps(300)).toHaveLength(3) // already small: never scaled, never upscaled
  })

  it('keeps the first encoding under budget and logs the choice', async () => {
    const { raster, encodes } = fakeRaster(800, 500, 120_000)
    const log = vi.fn()
    const shot = await fitToBudget(new ImageEncoding(), raster, 64_000, log)
    // 0.6 → 120 KB, 0.45 → 90 KB, 0.3 → 60 KB: fits at full size.
    expect(shot).toMatchObject({ type: 'image/webp', quality: 0.3, scale: 1, width: 800, height: 500, tries: 3 })
    expect(shot!.bytes.byteLength).toBe(60_000)
    expect(encodes.map((e) => e.quality)).toEqual([0.6, 0.45, 0.3])
    expect(log).toHaveBeenCalledWith('screenshot encoded', expect.objectContaining({ quality: 0.3, scale: 1, bytes: 60_000, maxBytes: 64_000, fits: true, tries: 3 }))
  })

  it('answers the first step when it already fits (one encode)', async () => {
    const { raster, encodes } = fakeRaster(800, 500, 30_000)
    const shot = await fitToBudget(new ImageEncoding(), raster, 64_000)
    expect(shot).toMatchObject({ quality: 0.6, scale: 1, tries: 1 })
    expect(encodes).toHaveLength(1)
  })

  it('scales down at the lowest quality, and answers the smallest when nothing fits', async () => {
    const { raster } = fakeRaster(800, 500, 300_000)
    const scaled = await fitToBudget(new ImageEncoding(), raster, 64_000)
    // 0.3 at scale 0.64 → 300k * 0.5 * 0.4096 = 61,440 bytes.
    expect(scaled).toMatchObject({ quality: 0.3, width: 512, height: 320, tries: 5 })
    expect(scaled!.scale).toBeCloseTo(0.64)

    const log = vi.fn()
    const smallest = await fitToBudget(new ImageEncoding(), raster, 1_000, log)
    expect(smallest).toMatchObject({ quality: 0.3, width: 320, height: 200, tries: budgetSteps(800).length })
    expect(log).toHaveBeenCalledWith('screenshot encoded', expect.objectContaining({ fits: false, width: 320 }))
  })

  it('falls back to JPEG inside the loop where WebP is not encodable', async () => {
    const encoding = new ImageEncoding()
    const { raster, encodes } = fakeRaster(800, 500, 80_000, false)
    const shot = await fitToBudget(encoding, raster, 64_000)
    expect(shot).toMatchObject({ type: 'image/jpeg', quality: 0.45 })
    expect(encodes.map((e) => e.type)).toEqual(['image/webp', 'image/jpeg', 'image/jpeg'])
    expect(encoding.preferred).toBe('image/jpeg')
  })

  it('renders with tldraw once (lossless PNG) and re-encodes that raster for each step', async () => {
    const editor = makeEditor()
    editor.createShape({ type: 'geo', x: 100, y: 100, props: { w: 200, h: 100 } })
    const toImage = vi.spyOn(editor, 'toImage').mockImplementation(async (_ids, opts) => {
      expect(opts).toMatchObject({ format: 'png', scale: 800 / 1280, pixelRatio: 1 })
      return { blob: blob(PNG, 10, 'image/png'), width: 800, height: 500 }
    })
    const fake = fakeRaster(800, 500, 200_000)
    const rasterize = vi.fn(async () => fake.raster)
    const shot = await renderScreenshot(editor, BOX, 800, new ImageEncoding(), undefined, { maxBytes: 64_000, rasterize })
    expect(toImage).toHaveBeenCalledTimes(1)
    expect(rasterize).toHaveBeenCalledTimes(1)
    expect(fake.encodes.length).toBeGreaterThan(3)
    expect(shot!.bytes.byteLength).toBeLessThanOrEqual(64_000)
    expect(fake.closed.value).toBe(true)
  })

  it('the budget is part of the cache key, and the pre-render uses the default budget', async () => {
    const renders: Array<{ maxBytes: number }> = []
    const timers: Array<() => void> = []
    const cache = new ScreenshotCache({
      render: async (_b, _s, maxBytes) => {
        renders.push({ maxBytes })
        return { bytes: new Uint8Array(WEBP), type: 'image/webp' }
      },
      docVersion: () => 1,
      viewport: () => BOX,
      setTimer: (fn) => timers.push(fn),
      clearTimer: () => timers.splice(0),
    })
    cache.start()
    timers.splice(0).forEach((fn) => fn())
    await cache.settled()
    expect(renders).toEqual([{ maxBytes: DEFAULT_SCREENSHOT_MAX_BYTES }])
    expect((await cache.get(undefined, undefined, DEFAULT_SCREENSHOT_MAX_BYTES)).source).toBe('cache')
    expect((await cache.get(undefined, undefined, 32_000)).source).toBe('render')
    expect(renders[1]).toEqual({ maxBytes: 32_000 })
    expect((await cache.get(undefined, undefined, 32_000)).source).toBe('cache')
  })
})

describe('shapes stream encoding', () => {
  it('gzips the shapes JSON, which inflates back to the same bytes', async () => {
    const json = new TextEncoder().encode(JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ id: `s${i}`, type: 'geo', x: i, y: i, props: { w: 100, h: 50 } }))))
    const encoded = await encodeShapes(json)
    expect(encoded.mimeType).toBe('application/gzip')
    expect(encoded.extension).toBe('json.gz')
    expect(encoded.bytes.byteLength).toBeLessThan(json.byteLength / 4)
    expect(gunzipSync(encoded.bytes).toString()).toBe(new TextDecoder().decode(json)) // not toEqual: jsdom and Node have their own Uint8Array
  })

  it('sends plain JSON where the page has no CompressionStream', async () => {
    vi.stubGlobal('CompressionStream', undefined)
    try {
      const json = new TextEncoder().encode('[]')
      expect(await encodeShapes(json)).toEqual({ bytes: json, mimeType: 'application/json', extension: 'json' })
    } finally {
      vi.unstubAllGlobals()
    }
  })

  it('answerContext streams the screenshot within maxBytes and the shapes as gzip', async () => {
    const editor = makeEditor()
    editor.createShape({ type: 'geo', x: 100, y: 100, props: { w: 200, h: 100 } })
    const budgets: number[] = []
    const screenshots = new ScreenshotCache({
      render: async (_b, _s, maxBytes) => {
        budgets.push(maxBytes)
        return { bytes: new Uint8Array(WEBP), type: 'image/webp' }
      },
      docVersion: () => 1,
      viewport: () => BOX,
    })
    const sent: Array<{ bytes: Uint8Array; opts: { topic: string; mimeType: string; name: string } }> = []
    const sender = { sendBytes: async (b: Uint8Array, opts: { topic: string; mimeType: string; name: string }) => void sent.push({ bytes: b, opts }) }
    const reply = await answerContext({ editor, sender, docVersion: () => 1, takeUserChanges: () => [], screenshots }, 'canvas-steward', {
      requestId: 'r1',
      bounds: BOX,
      maxBytes: 20_000,
      want: ['screenshot', 'shapes'],
    })
    expect(reply.streams).toEqual(['screenshot', 'shapes'])
    expect(budgets).toEqual([20_000])
    expect(sent.find((s) => s.opts.topic === TOPIC_SCREENSHOT)!.opts.mimeType).toBe('image/webp')
    const shapes = sent.find((s) => s.opts.topic === TOPIC_CONTEXT)!
    expect(shapes.opts).toMatchObject({ mimeType: 'application/gzip', name: 'r1.json.gz' })
    const parsed = JSON.parse(gunzipSync(shapes.bytes).toString()) as Array<{ type: string }>
    expect(parsed).toHaveLength(1)
    expect(parsed[0]!.type).toBe('geo')
  })
})
