// Pens (tldraw draw shapes) must draw every point they are given: tldraw draws a straight
// segment from its first point to its second only, and the shape's geometry follows the drawing.
import { describe, expect, it } from 'vitest'
import type { TLShapeId } from 'tldraw'
import { env, makeRig, page } from './harness'

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
})
