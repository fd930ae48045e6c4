import { describe, expect, it } from 'vitest'
import { ComposingThrottle } from '../src/connectors/composing'
import { COMPOSING_MIN_INTERVAL_MS, type ComposingHint } from '../src/protocol.gen'

function rig(intervalMs?: number) {
  const clock = { ms: 10_000 }
  const sent: ComposingHint[] = []
  const throttle = new ComposingThrottle({ send: (h) => sent.push(h), now: () => clock.ms, intervalMs })
  return { clock, sent, throttle }
}

describe('composing hints', () => {
  it('sends the first hint at once, then at most one per interval (2 s by default)', () => {
    const r = rig()
    expect(COMPOSING_MIN_INTERVAL_MS).toBe(2000)
    expect(r.throttle.composing()).toBe(true)
    for (const step of [100, 500, 900, 400]) {
      r.clock.ms += step // 1,900 ms of keystrokes: all inside the interval
      expect(r.throttle.composing()).toBe(false)
    }
    r.clock.ms += 100
    expect(r.throttle.composing()).toBe(true)
    expect(r.sent).toHaveLength(2)
    expect(r.throttle.throttled).toBe(4)
    expect(r.sent[0]).toEqual({ ts: 10 })
    expect(r.sent[1]).toEqual({ ts: 12 })
  })

  it('carries the bounds the prompt will carry, and none when the prompt has none', () => {
    const r = rig(0)
    const box = { x: 10, y: 20, w: 640, h: 400 }
    r.throttle.composing(box)
    r.throttle.composing(null)
    expect(r.sent[0]).toMatchObject({ bounds: box })
    expect('bounds' in r.sent[1]!).toBe(false)
  })

  it('starts a new composition right after a prompt was sent', () => {
    const r = rig()
    r.throttle.composing()
    r.clock.ms += 300
    expect(r.throttle.composing()).toBe(false)
    r.throttle.reset()
    expect(r.throttle.composing()).toBe(true)
    expect(r.sent).toHaveLength(2)
  })
})
