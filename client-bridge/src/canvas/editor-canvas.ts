// Applies wire verbs to a tldraw Editor: read the page as steward records, run the reference
// verb semantics (apply.ts), then write back only what changed, parents first.
import {
  getIndexAbove,
  getIndexBetween,
  type Editor,
  type IndexKey,
  type TLParentId,
  type TLShape,
  type TLShapeId,
} from 'tldraw'
import { applyWireAction, type ActionLike, type Shapes } from './apply'
import { withSeededRandom } from './seeded'
import { arrowBindingId, pageToLocal, toSteward, toTlId, toTlProps, type JsonMap, type StewardShape } from './record'

/** Every shape on the current page as steward records, in z-order (back to front). */
export function readPage(editor: Editor): Shapes {
  const out: Shapes = new Map()
  for (const shape of editor.getCurrentPageShapesSorted()) {
    const rec = toSteward(editor, shape)
    out.set(rec.id, rec)
  }
  return out
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

function depth(rec: StewardShape, all: Shapes): number {
  let d = 0
  let p = rec.parentId
  while (p && all.has(p) && d < 64) {
    d++
    p = (all.get(p) as StewardShape).parentId
  }
  return d
}

function parentFor(editor: Editor, rec: StewardShape): TLParentId {
  if (rec.parentId && editor.getShape(toTlId(rec.parentId))) return toTlId(rec.parentId)
  return editor.getCurrentPageId()
}

// Props whose tldraw form carries generated keys (line point ids/indices): rewritten on a
// create_shape even when equal, so every tab holds the same keys.
const CANONICAL_PROPS = new Set(['points'])

function writeShape(editor: Editor, rec: StewardShape, prev: StewardShape | undefined, canonical = false) {
  const id = toTlId(rec.id)
  let existing = editor.getShape(id)
  const parentId = parentFor(editor, rec)
  const local = pageToLocal(editor, parentId, rec.x, rec.y, rec.rotation)
  if (existing && existing.type !== rec.type) {
    editor.deleteShapes([id])
    existing = undefined
  }
  if (!existing) {
    const util = editor.getShapeUtil(rec.type as TLShape['type'])
    const defaults = util.getDefaultProps() as JsonMap
    const props = toTlProps(rec.type, rec.props, defaults)
    editor.createShape({ id, type: rec.type, x: local.x, y: local.y, rotation: local.rotation, parentId, props } as never)
  } else {
    // Only the props that changed: an untouched `text` keeps the user's rich formatting.
    const changed: JsonMap = {}
    const oldProps = prev?.props ?? {}
    for (const [k, v] of Object.entries(rec.props)) if (!prev || !same(oldProps[k], v) || (canonical && CANONICAL_PROPS.has(k))) changed[k] = v
    const defaults = editor.getShapeUtil(rec.type as TLShape['type']).getDefaultProps() as JsonMap
    const base = existing.props as unknown as JsonMap
    const props = toTlProps(rec.type, changed, base)
    for (const k of Object.keys(oldProps)) {
      if (!(k in rec.props) && k in defaults) props[k] = defaults[k]
    }
    const partial: Record<string, unknown> = {
      id,
      type: rec.type,
      x: local.x,
      y: local.y,
      rotation: local.rotation,
      props,
    }
    if (existing.parentId !== parentId) partial.parentId = parentId
    editor.updateShape(partial as never)
  }
  if (rec.type === 'arrow' && (canonical || !prev || !same(prev.bindings, rec.bindings))) writeArrowBindings(editor, rec)
}

function writeArrowBindings(editor: Editor, rec: StewardShape) {
  const id = toTlId(rec.id)
  const current = editor.getBindingsFromShape(id, 'arrow')
  for (const terminal of ['start', 'end'] as const) {
    const want = rec.bindings?.[terminal] ?? null
    const have = current.find((b) => (b.props as { terminal: string }).terminal === terminal)
    const target = want ? editor.getShape(toTlId(want)) : undefined
    // A binding the user's tab made has a random id: replace it with the canonical one.
    const fits = have && target && have.toId === target.id && have.id === arrowBindingId(rec.id, terminal)
    if (have && !fits) editor.deleteBinding(have.id)
    if (target && !fits) {
      editor.createBinding({
        id: arrowBindingId(rec.id, terminal),
        type: 'arrow',
        fromId: id,
        toId: target.id,
        props: { terminal, normalizedAnchor: { x: 0.5, y: 0.5 }, isExact: false, isPrecise: false },
      } as never)
    }
  }
}

/** Make each parent's children follow the order of `after`, keeping indices that already fit. */
function fixOrder(editor: Editor, after: Shapes) {
  const byParent = new Map<TLParentId, TLShapeId[]>()
  for (const rec of after.values()) {
    const shape = editor.getShape(toTlId(rec.id))
    if (!shape) continue
    const list = byParent.get(shape.parentId) ?? []
    list.push(shape.id)
    byParent.set(shape.parentId, list)
  }
  const updates: Array<{ id: TLShapeId; type: string; index: IndexKey }> = []
  for (const [parent, desired] of byParent) {
    const current = editor.getSortedChildIdsForParent(parent)
    const wanted = new Set(desired)
    // Children the records do not know (none normally) stay where they are, after ours.
    if (same(current.filter((i) => wanted.has(i)), desired)) continue
    let prev: IndexKey | null = null
    for (const sid of desired) {
      const shape = editor.getShape(sid) as TLShape
      if (prev === null || shape.index > prev) {
        prev = shape.index
      } else {
        const index: IndexKey = withSeededRandom(`order:${sid}:${prev}`, () => getIndexAbove(prev))
        updates.push({ id: sid, type: shape.type, index })
        prev = index
      }
    }
  }
  if (updates.length) editor.updateShapes(updates as never)
}

/** Write the difference between two page states into the editor (inside the caller's run). */
export function writeDiff(editor: Editor, before: Shapes, after: Shapes, recreated?: string) {
  const changed = [...after.values()].filter((rec) => !same(before.get(rec.id), rec) || rec.id === recreated)
  changed.sort((a, b) => depth(a, after) - depth(b, after))
  for (const rec of changed) {
    try {
      writeShape(editor, rec, before.get(rec.id), rec.id === recreated)
    } catch (err) {
      console.warn('[steward] could not write shape', rec.id, err)
    }
  }
  const removed = [...before.keys()].filter((id) => !after.has(id)).map(toTlId)
  const stillThere = removed.filter((id) => editor.getShape(id))
  if (stillThere.length) editor.deleteShapes(stillThere)
  fixOrder(editor, after)
}

/** Apply one canvas verb to the editor; returns the page state after it. */
export function applyToEditor(editor: Editor, action: ActionLike, before = readPage(editor)): Shapes {
  const after: Shapes = new Map([...before].map(([k, v]) => [k, JSON.parse(JSON.stringify(v)) as StewardShape]))
  applyWireAction(after, action)
  const created = action.name === 'create_shape' ? String(action.params?.id ?? '') : undefined
  writeDiff(editor, before, after, created)
  if (action.name === 'create_shape') canonicalIndex(editor, String(action.params?.id ?? ''))
  canonicalArrows(editor)
  return after
}

/**
 * tldraw keeps a bound arrow just above the highest shape it binds to, but whether it moves
 * depends on the path that led there (a tab that replayed after a reload takes another path).
 * Every tab therefore puts each bound arrow at one computed index, arrows in id order.
 */
function canonicalArrows(editor: Editor) {
  const arrows = editor
    .getCurrentPageShapes()
    .filter((s) => s.type === 'arrow')
    .sort((a, b) => (a.id < b.id ? -1 : 1))
  for (const arrow of arrows) {
    const bound = editor.getBindingsFromShape(arrow.id, 'arrow').map((b) => editor.getShape(b.toId)).filter((s): s is TLShape => !!s && s.parentId === arrow.parentId)
    if (bound.length === 0) continue
    const highest = bound.reduce((a, b) => (a.index > b.index ? a : b))
    const siblings = editor.getSortedChildIdsForParent(arrow.parentId).map((id) => editor.getShape(id) as TLShape)
    const next = siblings.find((s) => s.index > highest.index && s.id !== arrow.id)
    const index = withSeededRandom(`arrow:${arrow.id}:${highest.index}:${next?.index}`, () => getIndexBetween(highest.index, next?.index ?? null))
    if (index !== arrow.index) editor.updateShape({ id: arrow.id, type: 'arrow', index } as never)
  }
}

/**
 * A created (or replaced) shape gets an index computed from its neighbours, so the tab whose
 * user made it (tldraw picked a random index) ends with the same index as every other tab.
 */
function canonicalIndex(editor: Editor, id: string) {
  const shape = editor.getShape(toTlId(id))
  if (!shape) return
  const siblings = editor.getSortedChildIdsForParent(shape.parentId)
  const at = siblings.indexOf(shape.id)
  const prev = at > 0 ? editor.getShape(siblings[at - 1] as TLShapeId)?.index ?? null : null
  const next = at >= 0 && at < siblings.length - 1 ? editor.getShape(siblings[at + 1] as TLShapeId)?.index ?? null : null
  // Seeded by the inputs alone, so tabs that drew other random numbers before still agree.
  const index = withSeededRandom(`index:${id}:${prev}:${next}`, () => getIndexBetween(prev, next))
  if (index !== shape.index) editor.updateShape({ id: shape.id, type: shape.type, index } as never)
}
