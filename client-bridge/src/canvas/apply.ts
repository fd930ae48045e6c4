// The wire verbs on an ordered map of steward records: a translation of
// steward/canvas/apply.py (the reference). Map insertion order is the z-order, like the
// Python dict, so reorder/create/delete land identically in Python and in the browser.
import { localBox, num, rotatePoint, shapeBounds, union, type Rect } from './bounds'
import type { JsonMap, StewardShape } from './record'

export type Shapes = Map<string, StewardShape>
export interface ActionLike {
  name: string
  params?: JsonMap
}

export const UI_ONLY_VERBS = new Set(['set_viewport', 'think', 'todo', 'add_detail'])

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T

function idsOf(p: JsonMap): string[] {
  const raw = p.ids
  if (!Array.isArray(raw)) return []
  return [...new Set(raw.filter((i): i is string => typeof i === 'string'))]
}

/** `ids` that exist plus every shape below them, each once, in map order. */
export function descendants(shapes: Shapes, ids: Iterable<string>): string[] {
  const wanted = new Set([...ids].filter((i) => shapes.has(i)))
  if (wanted.size === 0) return []
  const children = new Map<string, string[]>()
  for (const [sid, s] of shapes) {
    if (typeof s.parentId === 'string') {
      const list = children.get(s.parentId) ?? []
      list.push(sid)
      children.set(s.parentId, list)
    }
  }
  const stack = [...wanted]
  while (stack.length) {
    for (const kid of children.get(stack.pop() as string) ?? []) {
      if (!wanted.has(kid)) {
        wanted.add(kid)
        stack.push(kid)
      }
    }
  }
  return [...shapes.keys()].filter((sid) => wanted.has(sid))
}

function translate(s: StewardShape, dx: number, dy: number) {
  s.x = num(s.x) + dx
  s.y = num(s.y) + dy
}

type Deltas = Map<string, [number, number]>

function boundsOf(ids: string[], shapes: Shapes): Array<[string, Rect]> {
  return ids.filter((i) => shapes.has(i)).map((i) => [i, shapeBounds(shapes.get(i) as StewardShape, shapes)])
}

export function align(ids: string[], alignment: string, shapes: Shapes): Deltas {
  const items = boundsOf(ids, shapes)
  const box = union(items.map(([, b]) => b))
  const out: Deltas = new Map()
  if (!box) return out
  for (const [sid, b] of items) {
    let dx = 0
    let dy = 0
    if (alignment === 'left') dx = box.x - b.x
    else if (alignment === 'right') dx = box.x + box.w - (b.x + b.w)
    else if (alignment === 'center-horizontal') dx = box.x + box.w / 2 - (b.x + b.w / 2)
    else if (alignment === 'top') dy = box.y - b.y
    else if (alignment === 'bottom') dy = box.y + box.h - (b.y + b.h)
    else if (alignment === 'center-vertical') dy = box.y + box.h / 2 - (b.y + b.h / 2)
    out.set(sid, [dx, dy])
  }
  return out
}

function sortedItems(items: Array<[string, Rect]>, horizontal: boolean) {
  // Array.prototype.sort is stable, like Python's sorted.
  return [...items].sort((a, b) => (horizontal ? a[1].x - b[1].x : a[1].y - b[1].y))
}

export function distribute(ids: string[], direction: string, shapes: Shapes): Deltas {
  const horizontal = direction === 'horizontal'
  const items = sortedItems(boundsOf(ids, shapes), horizontal)
  const out: Deltas = new Map()
  if (items.length < 3) {
    for (const [sid] of items) out.set(sid, [0, 0])
    return out
  }
  const first = (items[0] as [string, Rect])[1]
  const last = (items[items.length - 1] as [string, Rect])[1]
  let gap: number
  let cursor: number
  if (horizontal) {
    gap = (last.x + last.w - first.x - items.reduce((a, [, b]) => a + b.w, 0)) / (items.length - 1)
    cursor = first.x
  } else {
    gap = (last.y + last.h - first.y - items.reduce((a, [, b]) => a + b.h, 0)) / (items.length - 1)
    cursor = first.y
  }
  for (const [sid, b] of items) {
    if (horizontal) {
      out.set(sid, [cursor - b.x, 0])
      cursor += b.w + gap
    } else {
      out.set(sid, [0, cursor - b.y])
      cursor += b.h + gap
    }
  }
  return out
}

export function stack(ids: string[], direction: string, gap: number, shapes: Shapes): Deltas {
  const horizontal = direction === 'horizontal'
  const items = sortedItems(boundsOf(ids, shapes), horizontal)
  const out: Deltas = new Map()
  if (items.length === 0) return out
  const firstBox = (items[0] as [string, Rect])[1]
  let cursor = horizontal ? firstBox.x : firstBox.y
  for (const [sid, b] of items) {
    if (horizontal) {
      out.set(sid, [cursor - b.x, 0])
      cursor += b.w + gap
    } else {
      out.set(sid, [0, cursor - b.y])
      cursor += b.h + gap
    }
  }
  return out
}

function applyDeltas(shapes: Shapes, deltas: Deltas) {
  for (const [sid, [dx, dy]] of deltas) {
    if (dx === 0 && dy === 0) continue
    for (const m of descendants(shapes, [sid])) translate(shapes.get(m) as StewardShape, dx, dy)
  }
}

function scalePoint(p: unknown, sx: number, sy: number): unknown {
  if (!p || typeof p !== 'object' || Array.isArray(p)) return p
  const q = p as JsonMap
  return { ...q, x: num(q.x) * sx, y: num(q.y) * sy }
}

// Geo kinds that are each other's mirror image, across a vertical and a horizontal axis.
const MIRROR_X = new Map([['arrow-right', 'arrow-left'], ['arrow-left', 'arrow-right'], ['rhombus', 'rhombus-2'], ['rhombus-2', 'rhombus']])
const MIRROR_Y = new Map([['arrow-up', 'arrow-down'], ['arrow-down', 'arrow-up'], ['rhombus', 'rhombus-2'], ['rhombus-2', 'rhombus']])

/** Scale about (ox, oy); a negative scale mirrors the shape across that axis (a flip). */
function resizeShape(s: StewardShape, sx: number, sy: number, ox: number, oy: number) {
  s.x = ox + (num(s.x) - ox) * sx
  s.y = oy + (num(s.y) - oy) * sy
  const props = s.props
  if (!props || typeof props !== 'object') return
  if (s.type === 'note') {
    props.scale = num(props.scale, 1) * Math.sqrt(Math.abs(sx * sy))
  } else {
    if ('w' in props) props.w = num(props.w) * Math.abs(sx)
    if ('h' in props) props.h = num(props.h) * Math.abs(sy)
  }
  if (s.type === 'arrow') {
    for (const key of ['start', 'end']) if (key in props) props[key] = scalePoint(props[key], sx, sy)
  } else if (s.type === 'line' && Array.isArray(props.points)) {
    props.points = props.points.map((p) => scalePoint(p, sx, sy))
  } else if (s.type === 'draw' && Array.isArray(props.segments)) {
    props.segments = props.segments.map((seg) =>
      seg && typeof seg === 'object'
        ? { ...(seg as JsonMap), points: (((seg as JsonMap).points as unknown[]) ?? []).map((p) => scalePoint(p, sx, sy)) }
        : seg,
    )
  }
  if (sx < 0 || sy < 0) flip(s, props as JsonMap, sx < 0, sy < 0)
}

/** A mirrored resize, as the reference does it: point-based shapes are mirrored by their
 * scaled points; a box keeps positive sizes, so its origin moves to the mirrored box's
 * corner; one flip reverses the sense of a rotation. */
function flip(s: StewardShape, props: JsonMap, fx: boolean, fy: boolean) {
  let angle = num(s.rotation)
  if (fx !== fy) {
    const t = 2 * Math.PI
    angle = ((-angle % t) + t) % t
    s.rotation = angle
  }
  if (s.type !== 'arrow' && s.type !== 'line' && s.type !== 'draw') {
    const [, , w, h] = localBox(s)
    const cos = Math.cos(angle)
    const sin = Math.sin(angle)
    if (fx) {
      s.x = num(s.x) - w * cos
      s.y = num(s.y) - w * sin
    }
    if (fy) {
      s.x = num(s.x) + h * sin
      s.y = num(s.y) - h * cos
    }
  }
  if (s.type === 'geo') {
    let geo = String(props.geo)
    for (const [flipped, mirror] of [[fx, MIRROR_X], [fy, MIRROR_Y]] as const) {
      const other = flipped ? mirror.get(geo) : undefined
      if (other !== undefined) geo = props.geo = other
    }
  }
}

function replaceAll(shapes: Shapes, order: string[]) {
  const records = order.map((sid) => [sid, shapes.get(sid) as StewardShape] as const)
  shapes.clear()
  for (const [k, v] of records) shapes.set(k, v)
}

function reorder(shapes: Shapes, ids: string[], to: string, target: unknown) {
  const idSet = new Set(ids)
  const order = [...shapes.keys()]
  const moving = order.filter((sid) => idSet.has(sid))
  if (moving.length === 0) return
  const movingSet = new Set(moving)
  const rest = order.filter((sid) => !movingSet.has(sid))
  let next: string[]
  if (to === 'behind' || to === 'in_front') {
    // Relative to one named shape; nothing changes when it is missing or among the moved.
    if (typeof target !== 'string' || !rest.includes(target)) return
    const anchor = rest.indexOf(target) + (to === 'in_front' ? 1 : 0)
    next = [...rest.slice(0, anchor), ...moving, ...rest.slice(anchor)]
  } else if (to === 'front') next = [...rest, ...moving]
  else if (to === 'back') next = [...moving, ...rest]
  else {
    let anchor: number
    if (to === 'forward') {
      const last = Math.max(...moving.map((m) => order.indexOf(m)))
      const after = order.slice(last + 1).filter((sid) => !movingSet.has(sid))
      anchor = after.length ? rest.indexOf(after[0] as string) + 1 : rest.length
    } else {
      const first = Math.min(...moving.map((m) => order.indexOf(m)))
      const before = order.slice(0, first).filter((sid) => !movingSet.has(sid))
      anchor = before.length ? rest.indexOf(before[before.length - 1] as string) : 0
    }
    next = [...rest.slice(0, anchor), ...moving, ...rest.slice(anchor)]
  }
  replaceAll(shapes, next)
}

function create(shapes: Shapes, p: JsonMap) {
  const sid = p.id
  if (typeof sid !== 'string' || !sid) return
  const props = p.props && typeof p.props === 'object' && !Array.isArray(p.props) ? clone(p.props as JsonMap) : {}
  const rec: StewardShape = {
    id: sid,
    type: typeof p.type === 'string' && p.type ? p.type : 'unknown',
    x: num(p.x),
    y: num(p.y),
    rotation: num(p.rotation),
    parentId: typeof p.parentId === 'string' ? p.parentId : null,
    props,
  }
  if (p.bindings && typeof p.bindings === 'object' && !Array.isArray(p.bindings)) {
    const b = p.bindings as JsonMap
    rec.bindings = {
      start: typeof b.start === 'string' ? b.start : null,
      end: typeof b.end === 'string' ? b.end : null,
    }
  }
  shapes.set(sid, rec) // an existing key keeps its place, like a Python dict
}

function update(shapes: Shapes, p: JsonMap) {
  const sid = p.id
  if (typeof sid !== 'string') return
  const s = shapes.get(sid)
  if (!s) return
  for (const key of ['x', 'y', 'rotation'] as const) if (key in p) s[key] = num(p[key])
  if (typeof p.type === 'string') s.type = p.type
  if ('parentId' in p) s.parentId = typeof p.parentId === 'string' ? p.parentId : null
  if (p.props && typeof p.props === 'object' && !Array.isArray(p.props)) {
    for (const [k, v] of Object.entries(p.props as JsonMap)) {
      if (v === null) delete s.props[k]
      else s.props[k] = clone(v)
    }
  }
  if (p.bindings && typeof p.bindings === 'object' && !Array.isArray(p.bindings)) {
    const binds = (s.bindings ??= { start: null, end: null })
    for (const [k, v] of Object.entries(p.bindings as JsonMap)) {
      if (k === 'start' || k === 'end') binds[k] = typeof v === 'string' ? v : null
    }
  }
}

function remove(shapes: Shapes, ids: string[]) {
  const gone = new Set(descendants(shapes, ids))
  for (const sid of gone) shapes.delete(sid)
  for (const s of shapes.values()) {
    if (s.bindings) {
      if (s.bindings.start && gone.has(s.bindings.start)) s.bindings.start = null
      if (s.bindings.end && gone.has(s.bindings.end)) s.bindings.end = null
    }
  }
}

function group(shapes: Shapes, p: JsonMap) {
  const gid = p.id
  const kids = idsOf(p).filter((i) => shapes.has(i) && i !== gid)
  if (typeof gid !== 'string' || !gid || kids.length === 0) return
  const box = union(kids.map((k) => shapeBounds(shapes.get(k) as StewardShape, shapes))) as Rect
  const parent = (shapes.get(kids[0] as string) as StewardShape).parentId
  shapes.set(gid, { id: gid, type: 'group', x: box.x, y: box.y, rotation: 0, parentId: parent ?? null, props: {} })
  for (const k of kids) (shapes.get(k) as StewardShape).parentId = gid
}

function ungroup(shapes: Shapes, ids: string[]) {
  for (const gid of ids) {
    const g = shapes.get(gid)
    if (!g || g.type !== 'group') continue
    for (const s of shapes.values()) if (s.parentId === gid) s.parentId = g.parentId ?? null
    shapes.delete(gid)
  }
}

function layout(shapes: Shapes, name: string, p: JsonMap) {
  const ids = idsOf(p).filter((i) => shapes.has(i))
  const deltas =
    name === 'align'
      ? align(ids, String(p.alignment), shapes)
      : name === 'distribute'
        ? distribute(ids, String(p.direction), shapes)
        : stack(ids, String(p.direction), num(p.gap), shapes)
  applyDeltas(shapes, deltas)
}

const TAU = 2 * Math.PI

const HANDLERS: Record<string, (shapes: Shapes, p: JsonMap) => void> = {
  create_shape: create,
  update_shape: update,
  delete_shape: (s, p) => remove(s, idsOf(p)),
  move: (s, p) => {
    const dx = num(p.dx)
    const dy = num(p.dy)
    for (const sid of descendants(s, idsOf(p))) translate(s.get(sid) as StewardShape, dx, dy)
  },
  resize: (s, p) => {
    const sx = num(p.scaleX, 1)
    const sy = num(p.scaleY, 1)
    const ox = num(p.originX)
    const oy = num(p.originY)
    for (const sid of descendants(s, idsOf(p))) resizeShape(s.get(sid) as StewardShape, sx, sy, ox, oy)
  },
  rotate: (s, p) => {
    const angle = num(p.angle)
    const ox = num(p.originX)
    const oy = num(p.originY)
    for (const sid of descendants(s, idsOf(p))) {
      const r = s.get(sid) as StewardShape
      ;[r.x, r.y] = rotatePoint(num(r.x), num(r.y), ox, oy, angle)
      r.rotation = (((num(r.rotation) + angle) % TAU) + TAU) % TAU
    }
  },
  group,
  ungroup: (s, p) => ungroup(s, idsOf(p)),
  align: (s, p) => layout(s, 'align', p),
  distribute: (s, p) => layout(s, 'distribute', p),
  stack: (s, p) => layout(s, 'stack', p),
  reorder: (s, p) => reorder(s, idsOf(p), typeof p.to === 'string' && p.to ? p.to : 'front', p.target),
}

export const CANVAS_VERBS = Object.keys(HANDLERS)

/** Apply one wire action in place; odd params are skipped, never thrown. */
export function applyWireAction(shapes: Shapes, action: ActionLike): void {
  HANDLERS[action.name]?.(shapes, action.params ?? {})
}
