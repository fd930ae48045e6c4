// The steward's shape record (docs/WIRE-VERBS.md) and its two-way mapping to tldraw records.
// Steward records use page coordinates, plain `text` and point arrays; tldraw keeps
// parent-relative coordinates, `richText`, indexed line points and encoded draw paths.
import {
  b64Vecs,
  compressLegacySegments,
  createBindingId,
  getIndices,
  Mat,
  renderPlaintextFromRichText,
  toRichText,
  type Editor,
  type IndexKey,
  type TLParentId,
  type TLShape,
  type TLShapeId,
} from 'tldraw'

import { withSeededRandom } from './seeded'

export type JsonMap = Record<string, unknown>

export interface StewardShape {
  id: string
  type: string
  x: number
  y: number
  rotation: number
  parentId: string | null
  bindings?: { start: string | null; end: string | null }
  props: JsonMap
}

const SHAPE_PREFIX = 'shape:'
const TAU = Math.PI * 2

export const toTlId = (id: string): TLShapeId =>
  (id.startsWith(SHAPE_PREFIX) ? id : SHAPE_PREFIX + id) as TLShapeId
export const fromTlId = (id: string): string => (id.startsWith(SHAPE_PREFIX) ? id.slice(SHAPE_PREFIX.length) : id)

export function normaliseAngle(r: number): number {
  const n = ((r % TAU) + TAU) % TAU
  return Math.abs(n - TAU) < 1e-12 ? 0 : n
}

// Which tldraw props each known type exposes to the steward (besides `text`, `points`, `segments`).
const EXPOSED: Record<string, string[]> = {
  geo: ['geo', 'w', 'h', 'color', 'labelColor', 'fill', 'dash', 'size', 'font', 'align', 'verticalAlign', 'growY'],
  text: ['color', 'size', 'font', 'textAlign', 'w', 'autoSize', 'scale'],
  note: ['color', 'size', 'font', 'align', 'verticalAlign', 'growY', 'scale'],
  arrow: ['start', 'end', 'bend', 'color', 'labelColor', 'fill', 'dash', 'size', 'font', 'arrowheadStart', 'arrowheadEnd'],
  line: ['color', 'dash', 'size', 'spline'],
  draw: ['color', 'fill', 'dash', 'size', 'isComplete', 'isClosed', 'isPen'],
  group: [],
}
const HAS_TEXT = new Set(['geo', 'text', 'note', 'arrow'])

/** The steward record of a tldraw shape, measured with the editor (page transform, plain text). */
export function toSteward(editor: Editor, shape: TLShape): StewardShape {
  const m = editor.getShapePageTransform(shape.id)
  const d = Mat.Decompose(m)
  const parent = editor.getShape(shape.parentId as TLShapeId)
  const tlProps = shape.props as unknown as JsonMap
  const exposed = EXPOSED[shape.type]
  const props: JsonMap = {}
  if (exposed) {
    for (const key of exposed) if (key in tlProps) props[key] = clone(tlProps[key])
    if (HAS_TEXT.has(shape.type)) {
      const rich = tlProps.richText
      props.text = rich ? renderPlaintextFromRichText(editor, rich as never) : ''
    }
    if (shape.type === 'line') {
      const pts = Object.values((tlProps.points ?? {}) as Record<string, { index: string; x: number; y: number }>)
      pts.sort((a, b) => (a.index < b.index ? -1 : a.index > b.index ? 1 : 0))
      props.points = pts.map((p) => ({ x: p.x, y: p.y }))
    }
    if (shape.type === 'draw') {
      const segs = (tlProps.segments ?? []) as Array<{ type: string; path: string; dim?: 2 | 3 }>
      props.segments = segs.map((s) => ({ type: s.type, points: b64Vecs.decodePoints(s.path, s.dim) }))
    }
  } else {
    Object.assign(props, clone(tlProps))
  }
  const rec: StewardShape = {
    id: fromTlId(shape.id),
    type: shape.type,
    x: d.x,
    y: d.y,
    rotation: normaliseAngle(d.rotation),
    parentId: parent ? fromTlId(parent.id) : null,
    props,
  }
  if (shape.type === 'arrow') {
    const b = { start: null as string | null, end: null as string | null }
    for (const binding of editor.getBindingsFromShape(shape.id, 'arrow')) {
      const terminal = (binding.props as { terminal: 'start' | 'end' }).terminal
      b[terminal] = fromTlId(binding.toId)
    }
    rec.bindings = b
  }
  return rec
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T)
}

/** Converts steward props onto a tldraw props object (base = current or default props). */
export function toTlProps(type: string, props: JsonMap, base: JsonMap): JsonMap {
  const out: JsonMap = { ...base }
  const exposed = EXPOSED[type]
  for (const [key, value] of Object.entries(props)) {
    if (key === 'text') {
      if ('richText' in base) out.richText = toRichText(String(value ?? ''))
      continue
    }
    if (type === 'line' && key === 'points' && Array.isArray(value)) {
      const idx = withSeededRandom(`points:${value.length}`, () => getIndices(value.length))
      const points: JsonMap = {}
      value.forEach((p, i) => {
        const id = `p${i}`
        const pt = p as { x?: unknown; y?: unknown }
        points[id] = { id, index: idx[i] as IndexKey, x: numOr(pt.x), y: numOr(pt.y) }
      })
      out.points = points
      continue
    }
    if (type === 'draw' && key === 'segments' && Array.isArray(value)) {
      const segs = value.flatMap((s) => {
        const seg = s as { type?: string; points?: Array<{ x?: unknown; y?: unknown; z?: unknown }> }
        const type = seg.type === 'straight' ? ('straight' as const) : ('free' as const)
        const points = (seg.points ?? []).map((p) => ({ x: numOr(p.x), y: numOr(p.y), z: typeof p.z === 'number' ? p.z : 0.5 }))
        // tldraw draws a straight segment from its first point to its second only, so a
        // straight polyline becomes one segment per edge (as steward/canvas/draw.py does).
        if (type === 'straight' && points.length > 2) return points.slice(1).map((p, i) => ({ type, points: [points[i]!, p] }))
        return [{ type, points }]
      })
      out.segments = compressLegacySegments(segs)
      continue
    }
    // Only props tldraw knows for this type; unknown keys would fail record validation.
    if (exposed ? exposed.includes(key) || key in base : key in base) {
      if (value === null) out[key] = base[key]
      else out[key] = clone(value)
    }
  }
  return out
}

function numOr(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback
}

/** Page position/rotation → coordinates local to `parentId` (a shape) or the page. */
export function pageToLocal(editor: Editor, parentId: TLParentId, x: number, y: number, rotation: number) {
  const parent = editor.getShape(parentId as TLShapeId)
  if (!parent) return { x, y, rotation: normaliseAngle(rotation) }
  const pm = editor.getShapePageTransform(parent.id)
  const local = Mat.applyToPoint(Mat.Inverse(pm), { x, y })
  return { x: local.x, y: local.y, rotation: normaliseAngle(rotation - Mat.Decompose(pm).rotation) }
}

export function arrowBindingId(arrowId: string, terminal: 'start' | 'end') {
  // Deterministic ids, so every browser's store holds identical binding records.
  return createBindingId(`${fromTlId(arrowId)}.${terminal}`)
}
