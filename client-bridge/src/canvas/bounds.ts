// Page bounds of a steward shape record: the same formula as steward/canvas/bounds.py, so
// layout verbs compute identical results in Python and in every browser.
import type { StewardShape } from './record'

export const FONT_SIZES: Record<string, number> = { s: 18, m: 24, l: 36, xl: 44 }
export const NOTE_SIZE = 200
const CHAR_WIDTH_EM = 0.6
const LINE_HEIGHT_EM = 1.35

export interface Rect {
  x: number
  y: number
  w: number
  h: number
}

export function num(value: unknown, fallback = 0): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}

export function union(rects: Rect[]): Rect | null {
  if (rects.length === 0) return null
  const x0 = Math.min(...rects.map((r) => r.x))
  const y0 = Math.min(...rects.map((r) => r.y))
  const x1 = Math.max(...rects.map((r) => r.x + r.w))
  const y1 = Math.max(...rects.map((r) => r.y + r.h))
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 }
}

function fontSize(props: Record<string, unknown>): number {
  return (FONT_SIZES[String(props.size ?? 'm')] ?? 24) * num(props.scale, 1)
}

function textExtent(text: string, size: number): [number, number] {
  const lines = text ? text.split('\n') : ['']
  const longest = Math.max(...lines.map((l) => l.length))
  return [Math.max(longest, 1) * CHAR_WIDTH_EM * size, lines.length * LINE_HEIGHT_EM * size]
}

function pointsBox(points: unknown[]): [number, number, number, number] {
  const xs: number[] = []
  const ys: number[] = []
  for (const p of points) {
    if (p && typeof p === 'object') {
      xs.push(num((p as Record<string, unknown>).x))
      ys.push(num((p as Record<string, unknown>).y))
    }
  }
  if (xs.length === 0) return [0, 0, 1, 1]
  const minX = Math.min(...xs)
  const minY = Math.min(...ys)
  return [minX, minY, Math.max(...xs) - minX, Math.max(...ys) - minY]
}

/** (x, y, w, h) of the unrotated shape relative to its origin. */
export function localBox(shape: StewardShape): [number, number, number, number] {
  const props = (shape.props ?? {}) as Record<string, unknown>
  switch (shape.type) {
    case 'geo':
      return [0, 0, num(props.w, 1), num(props.h, 1) + num(props.growY)]
    case 'note': {
      const side = NOTE_SIZE * num(props.scale, 1)
      return [0, 0, side, side + num(props.growY)]
    }
    case 'text': {
      const size = fontSize(props)
      const [estW, estH] = textExtent(String(props.text ?? ''), size)
      let w = num(props.w, 0)
      if (props.autoSize !== false || w <= 0) w = estW
      return [0, 0, w, estH]
    }
    case 'arrow':
      return pointsBox([props.start ?? {}, props.end ?? {}])
    case 'line':
      return pointsBox(Array.isArray(props.points) ? props.points : [])
    case 'draw': {
      const segs = Array.isArray(props.segments) ? props.segments : []
      const pts: unknown[] = []
      for (const s of segs) {
        if (s && typeof s === 'object' && Array.isArray((s as Record<string, unknown>).points)) {
          pts.push(...((s as Record<string, unknown>).points as unknown[]))
        }
      }
      return pointsBox(pts)
    }
    default:
      return [0, 0, num(props.w, 1), num(props.h, 1)]
  }
}

export function rotatePoint(px: number, py: number, ox: number, oy: number, angle: number): [number, number] {
  if (angle === 0) return [px, py]
  const c = Math.cos(angle)
  const s = Math.sin(angle)
  const dx = px - ox
  const dy = py - oy
  return [ox + dx * c - dy * s, oy + dx * s + dy * c]
}

/** Axis-aligned page bounds; a group is the union of its children when `all` is given. */
export function shapeBounds(shape: StewardShape, all?: Map<string, StewardShape>): Rect {
  if (shape.type === 'group' && all) {
    const kids = [...all.values()].filter((s) => s.parentId === shape.id)
    const box = union(kids.map((k) => shapeBounds(k, all)))
    if (box) return box
  }
  const x = num(shape.x)
  const y = num(shape.y)
  const [lx, ly, w, h] = localBox(shape)
  const rot = num(shape.rotation)
  if (rot === 0) return { x: x + lx, y: y + ly, w, h }
  const corners = [
    [lx, ly],
    [lx + w, ly],
    [lx, ly + h],
    [lx + w, ly + h],
  ].map(([cx, cy]) => rotatePoint(x + (cx as number), y + (cy as number), x, y, rot))
  const xs = corners.map((c) => c[0])
  const ys = corners.map((c) => c[1])
  return { x: Math.min(...xs), y: Math.min(...ys), w: Math.max(...xs) - Math.min(...xs), h: Math.max(...ys) - Math.min(...ys) }
}
