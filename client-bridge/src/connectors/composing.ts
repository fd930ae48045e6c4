// Connector: tells the steward that the user is composing a prompt (`steward:composing`), so
// it fetches the host's context while the user types instead of after the prompt arrives.
// Throttled to one hint per COMPOSING_MIN_INTERVAL_MS; the steward rate-limits on its side too.
// Pure (no tldraw): the sender and the clock are injected.
import { COMPOSING_MIN_INTERVAL_MS, type Box, type ComposingHint } from '../protocol.gen'

export interface ComposingOptions {
  send(hint: ComposingHint): void
  intervalMs?: number
  /** Milliseconds; default Date.now. */
  now?: () => number
}

export class ComposingThrottle {
  sent = 0
  throttled = 0
  private lastAt = Number.NEGATIVE_INFINITY
  private readonly intervalMs: number
  private readonly now: () => number

  constructor(private readonly opts: ComposingOptions) {
    this.intervalMs = opts.intervalMs ?? COMPOSING_MIN_INTERVAL_MS
    this.now = opts.now ?? Date.now
  }

  /** The user focused or typed into the prompt box. `bounds` must be the bounds the prompt
   * will carry (none: this tab's own view), so the steward's prefetch matches the prompt.
   * Returns whether a hint was sent. */
  composing(bounds?: Box | null): boolean {
    const now = this.now()
    if (now - this.lastAt < this.intervalMs) {
      this.throttled++
      return false
    }
    this.lastAt = now
    this.opts.send(bounds ? { bounds, ts: now / 1000 } : { ts: now / 1000 })
    this.sent++
    return true
  }

  /** A prompt was sent: the next keystroke starts a new composition and hints at once. */
  reset(): void {
    this.lastAt = Number.NEGATIVE_INFINITY
  }
}
