// The browser executor and the Python reference (steward/canvas/apply.py) must compute the
// same page. verbs.json holds the reference's page after each step of a few scripts
// (regenerate with `uv run python client-bridge/test/parity/gen_fixtures.py`).
import { describe, expect, it } from 'vitest'
import fixtures from './parity/verbs.json'
import { env, makeRig, page } from './harness'
import type { WireAction } from '../src/protocol.gen'

type Rec = { id: string; type: string; x: number; y: number; rotation: number; parentId?: string; bindings?: Record<string, string | null>; props: Record<string, unknown> }
type Frame = { action: WireAction; page: Rec[] }

const TOL = 1e-6

function close(a: unknown, b: unknown, path: string) {
  if (typeof b === 'number') {
    expect(typeof a, path).toBe('number')
    expect(Math.abs((a as number) - b), `${path}: ${a} vs ${b}`).toBeLessThan(TOL)
  } else if (Array.isArray(b)) {
    expect(Array.isArray(a), path).toBe(true)
    expect((a as unknown[]).length, path).toBe(b.length)
    b.forEach((v, i) => close((a as unknown[])[i], v, `${path}[${i}]`))
  } else if (b && typeof b === 'object') {
    for (const [k, v] of Object.entries(b)) {
      if (k === 'z') continue // draw pressure is encoded with Float16 deltas in tldraw
      close((a as Record<string, unknown>)[k], v, `${path}.${k}`)
    }
  } else {
    expect(a, path).toEqual(b)
  }
}

function angle(r: number) {
  const t = 2 * Math.PI
  return ((r % t) + t) % t
}

describe('parity with the Python reference', () => {
  for (const [name, frames] of Object.entries(fixtures as unknown as Record<string, Frame[]>)) {
    it(name, () => {
      const rig = makeRig()
      frames.forEach((frame, i) => {
        // Known model difference: tldraw keeps a bound arrow just above its targets.
        rig.executor.receive(env('s', i + 1, [frame.action as never]))
        const got = page(rig.editor)
        const want = frame.page
        const where = `${name} step ${i} (${frame.action.name})`
        expect(Object.keys(got).sort(), where).toEqual(want.map((r) => r.id).sort())
        // z-order among siblings follows the reference's key order
        const parents = new Set(want.map((r) => r.parentId ?? null))
        const boundArrows = new Set(want.filter((r) => r.type === 'arrow' && r.bindings && (r.bindings.start || r.bindings.end)).map((r) => r.id))
        for (const parent of parents) {
          const order = (ids: string[]) => ids.filter((id) => !boundArrows.has(id))
          const wantIds = want.filter((r) => (r.parentId ?? null) === parent).map((r) => r.id)
          const gotIds = Object.values(got).filter((r) => (r.parentId ?? null) === parent).map((r) => r.id)
          expect(order(gotIds), `${where} order under ${parent}`).toEqual(order(wantIds))
        }
        for (const w of want) {
          const g = got[w.id]!
          const at = `${where} ${w.id}`
          expect(g.type, at).toBe(w.type)
          close(g.x, w.x, `${at}.x`)
          close(g.y, w.y, `${at}.y`)
          expect(Math.abs(angle(g.rotation) - angle(w.rotation)) % (2 * Math.PI), `${at}.rotation`).toBeLessThan(1e-6)
          expect(g.parentId ?? null, `${at}.parentId`).toBe(w.parentId ?? null)
          if (w.bindings) expect(g.bindings, `${at}.bindings`).toEqual({ start: null, end: null, ...w.bindings })
          const props = { ...w.props }
          if (w.type === 'text') delete props.w // tldraw measures auto-sized text itself
          close(g.props, props, `${at}.props`)
        }
      })
    })
  }
})
