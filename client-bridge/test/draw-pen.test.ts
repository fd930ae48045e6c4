// Pens (tldraw draw shapes) must draw every point they are given: tldraw draws a straight
// segment from its first point to its second only, and the shape's geometry follows the drawing.
import { describe, expect, it } from 'vitest'
import type { TLShapeId } from 'tldraw'
import { env, makeRig, page } from './harness'
import fixtures from './parity/verbs.json'

const fence = [
  { x: 0, y: 0, z: 0.5 },
  { x: 360, y: 0, z: 0.5 },
  { x: 360, y: 380, z: 0.5 },
  { x: 0, y: 380, z: 0.5 },
]

type Seg = { type: string; points: Array<{ x: number; y: number; z: number }> }

function pen(id: string, segments: Seg[], isClosed = false) {
  return {
    name: 'create_shape' as const,
    params: {
      id,
      type: 'draw',
      x: 45,
      y: 305,
      rotation: 0,
      props: { segments, color: 'black', fill: 'none', dash: 'draw', size: 'm', isComplete: true, isClosed, isPen: true },
    },
  }
}

function bounds(rig: ReturnType<typeof makeRig>, id: string) {
  const b = rig.editor.getShapePageBounds(`shape:${id}` as TLShapeId)!
  return { x: b.x, y: b.y, w: b.w, h: b.h }
}

function expectBox(got: { x: number; y: number; w: number; h: number }, want: { x: number; y: number; w: number; h: number }) {
  for (const k of ['x', 'y', 'w', 'h'] as const) expect(Math.abs(got[k] - want[k]), `${k}: ${got[k]} vs ${want[k]}`).toBeLessThan(0.5)
}

describe('pen shapes draw all their points', () => {
  it('a straight polyline sent as one segment is drawn through all four points', () => {
    const rig = makeRig()
    rig.executor.receive(env('s', 1, [pen('rail', [{ type: 'straight', points: fence }])]))
    expectBox(bounds(rig, 'rail'), { x: 45, y: 305, w: 360, h: 380 })
    // One straight segment per edge, read back as such (the mirror holds the same).
    const segs = page(rig.editor).rail!.props.segments as Array<{ type: string; points: Array<{ x: number; y: number }> }>
    expect(segs.map((s) => s.type)).toEqual(['straight', 'straight', 'straight'])
    expect(segs.map((s) => s.points.map((p) => [p.x, p.y]))).toEqual([
      [[0, 0], [360, 0]],
      [[360, 0], [360, 380]],
      [[360, 380], [0, 380]],
    ])
  })

  it('a straight polyline sent edge by edge is drawn through all four points', () => {
    const rig = makeRig()
    const edges: Seg[] = fence.slice(1).map((p, i) => ({ type: 'straight', points: [fence[i]!, p] }))
    rig.executor.receive(env('s', 1, [pen('rail', edges)]))
    expectBox(bounds(rig, 'rail'), { x: 45, y: 305, w: 360, h: 380 })
  })

  it('a free pen with many points is drawn through all of them', () => {
    const rig = makeRig()
    const wave = Array.from({ length: 400 }, (_, i) => ({ x: i, y: Math.round(50 + 50 * Math.sin(i / 20)), z: 0.5 }))
    rig.executor.receive(env('s', 1, [pen('wave', [{ type: 'free', points: wave }])]))
    const ys = wave.map((p) => p.y)
    const minY = Math.min(...ys)
    expectBox(bounds(rig, 'wave'), { x: 45, y: 305 + minY, w: 399, h: Math.max(...ys) - minY })
  })

  it('a closed smooth pen from the steward is drawn through every point it was given', () => {
    // The record the steward sends for a `pen` of twelve points on an ellipse, closed and
    // smooth (gen_fixtures.py's RING); tldraw's drawn outline must pass through each point.
    const ring = Array.from({ length: 12 }, (_, k) => ({
      x: 500 + 120 * Math.cos((k * Math.PI) / 6),
      y: 300 + 80 * Math.sin((k * Math.PI) / 6),
    }))
    const frames = (fixtures as unknown as Record<string, Array<{ action: { name: string; params: Record<string, unknown> } }>>).smooth_ring!
    const rig = makeRig()
    rig.executor.receive(env('s', 1, [frames[0]!.action as never]))
    const id = 'shape:ring' as TLShapeId
    const shape = rig.editor.getShape(id)!
    const geometry = rig.editor.getShapeGeometry(id)
    for (const p of ring) {
      const local = { x: p.x - shape.x, y: p.y - shape.y }
      const off = geometry.distanceToPoint(local as never, false)
      expect(Math.abs(off), `(${p.x.toFixed(1)}, ${p.y.toFixed(1)}) is ${off.toFixed(2)} px off the stroke`).toBeLessThan(2)
    }
  })
})
