// The host's screenshot cache: renders the image the steward will ask for while the canvas is
// idle, so `steward.context` can answer at once instead of waiting seconds for `toImage`.
// Pure (no tldraw): the render, the document version and the timers are injected.
import { DEFAULT_SCREENSHOT_MAX_BYTES, DEFAULT_SCREENSHOT_MAX_SIZE, type Box } from '../protocol.gen'
import type { Screenshot } from './image-encoding'

/** Encoded bytes with their media type (WebP or JPEG), fitted under `maxBytes` where it can
 * be, or null when nothing could be drawn. */
export type RenderFn = (bounds: Box, maxSize: number, maxBytes: number) => Promise<Screenshot | null>
/** Where the answer came from: the cache, a pre-render already under way, or a new render. */
export type ShotSource = 'cache' | 'joined' | 'render'

export interface ScreenshotCacheOptions {
  render: RenderFn
  /** The document version now (must be current: flush pending store history first). */
  docVersion(): number
  /** The viewport now: the pre-render's box when the last request named none. */
  viewport(): Box
  idleMs?: number
  defaultMaxSize?: number
  defaultMaxBytes?: number
  setTimer?: (fn: () => void, ms: number) => unknown
  clearTimer?: (handle: unknown) => void
  log?: (msg: string, extra?: unknown) => void
}

interface Key {
  docVersion: number
  boundsKey: string
  maxSize: number
  maxBytes: number
}

export interface ScreenshotStats {
  hits: number
  joined: number
  renders: number
  prerenders: number
  discarded: number
  lastSource: ShotSource | null
}

export const boundsKey = (b: Box): string => [b.x, b.y, b.w, b.h].map((v) => Math.round(v * 100) / 100).join(',')
const same = (a: Key, b: Key) =>
  a.docVersion === b.docVersion && a.boundsKey === b.boundsKey && a.maxSize === b.maxSize && a.maxBytes === b.maxBytes

export class ScreenshotCache {
  readonly stats: ScreenshotStats = { hits: 0, joined: 0, renders: 0, prerenders: 0, discarded: 0, lastSource: null }
  private entry: (Key & { shot: Screenshot }) | null = null
  private inflight: { key: Key; done: Promise<Screenshot | null> } | null = null
  private last: { bounds?: Box | null; maxSize: number; maxBytes: number }
  private timer: unknown = null
  private busy = 0
  private running = false
  private readonly idleMs: number
  private readonly setTimer: (fn: () => void, ms: number) => unknown
  private readonly clearTimer: (handle: unknown) => void

  constructor(private readonly opts: ScreenshotCacheOptions) {
    this.idleMs = opts.idleMs ?? 400
    this.last = { maxSize: opts.defaultMaxSize ?? DEFAULT_SCREENSHOT_MAX_SIZE, maxBytes: opts.defaultMaxBytes ?? DEFAULT_SCREENSHOT_MAX_BYTES }
    this.setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms))
    this.clearTimer = opts.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>))
  }

  /** Host only: pre-render after each quiet spell. */
  start(): void {
    if (this.running) return
    this.running = true
    this.changed()
  }

  stop(): void {
    this.running = false
    if (this.timer !== null) this.clearTimer(this.timer)
    this.timer = null
    this.entry = null // a former host's image may go stale unseen
  }

  get active(): boolean {
    return this.running
  }

  /** The document (or the viewport) changed: wait for `idleMs` of quiet, then pre-render. */
  changed(): void {
    if (!this.running) return
    if (this.timer !== null) this.clearTimer(this.timer)
    this.timer = this.setTimer(() => {
      this.timer = null
      void this.prerender()
    }, this.idleMs)
  }

  /** The screenshot for `bounds` at `maxSize` within `maxBytes` for the document as it is
   * now (absent: the last request's size and budget, which the idle pre-render also uses). */
  async get(
    bounds: Box | null | undefined,
    maxSize: number | null | undefined,
    maxBytes?: number | null,
  ): Promise<{ shot: Screenshot | null; source: ShotSource }> {
    this.last = { bounds, maxSize: maxSize ?? this.last.maxSize, maxBytes: maxBytes ?? this.last.maxBytes }
    const key = this.keyFor(bounds ?? this.opts.viewport())
    if (this.entry && same(this.entry, key)) return this.answered('cache', this.entry.shot)
    if (this.inflight && same(this.inflight.key, key)) {
      const shot = await this.inflight.done
      if (this.opts.docVersion() === key.docVersion) return this.answered('joined', shot)
    }
    this.stats.renders++
    const box = bounds ?? this.opts.viewport()
    const shot = await this.run(this.keyFor(box), box)
    return this.answered('render', shot)
  }

  /** Resolves once no pre-render is pending or running (benches wait on it for quiet). */
  async settled(): Promise<void> {
    while (this.timer !== null || this.busy > 0) {
      if (this.inflight) await this.inflight.done.catch(() => null)
      else await new Promise((r) => setTimeout(r, 20))
    }
  }

  private answered(source: ShotSource, shot: Screenshot | null) {
    this.stats.lastSource = source
    if (source === 'cache') this.stats.hits++
    if (source === 'joined') this.stats.joined++
    return { shot, source }
  }

  private keyFor(bounds: Box): Key {
    const { maxSize, maxBytes } = this.last
    return { docVersion: this.opts.docVersion(), boundsKey: boundsKey(bounds), maxSize, maxBytes }
  }

  private async prerender(): Promise<void> {
    if (!this.running) return
    // Never two renders at once: the running one re-arms the timer when it ends.
    if (this.busy > 0) return
    const bounds = this.last.bounds ?? this.opts.viewport()
    const key = this.keyFor(bounds)
    if (this.entry && same(this.entry, key)) return
    this.stats.prerenders++
    try {
      await this.run(key, bounds)
    } catch (err) {
      this.opts.log?.('screenshot pre-render failed', String(err))
    }
  }

  /** Render once for `key`; keep the result only if the document did not change meanwhile. */
  private async run(key: Key, bounds: Box): Promise<Screenshot | null> {
    const done = this.opts.render(bounds, key.maxSize, key.maxBytes)
    const mine = { key, done }
    this.inflight = mine
    this.busy++
    try {
      const shot = await done
      if (this.opts.docVersion() !== key.docVersion) this.stats.discarded++
      else if (shot) this.entry = { ...key, shot }
      return shot
    } finally {
      this.busy--
      if (this.inflight === mine) this.inflight = null
      // The document moved on while rendering: pre-render again once it is quiet.
      if (this.running && this.opts.docVersion() !== key.docVersion) this.changed()
    }
  }
}
