// The wire verbs on an ordered map of steward records: a translation of
// steward/canvas/apply.py (the reference). Map insertion order is the z-order, like the
// Python dict, so reorder/create/delete land identically in Python and in the browser.
// Layout (move, resize, rotate, align, distribute, stack) is not on the wire: the steward
// works it out on its mirror and sends the changed records as update_shape.
import { num } from './bounds'
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

const HANDLERS: Record<string, (shapes: Shapes, p: JsonMap) => void> = {
  create_shape: create,
  update_shape: update,
  delete_shape: (s, p) => remove(s, idsOf(p)),
  reorder: (s, p) => reorder(s, idsOf(p), typeof p.to === 'string' && p.to ? p.to : 'front', p.target),
}

export const CANVAS_VERBS = Object.keys(HANDLERS)

/** Apply one wire action in place; odd params are skipped, never thrown. */
export function applyWireAction(shapes: Shapes, action: ActionLike): void {
  HANDLERS[action.name]?.(shapes, action.params ?? {})
}
