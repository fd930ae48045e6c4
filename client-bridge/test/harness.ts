// A real tldraw Editor without a browser (jsdom), set up as FIELD-NOTES describe.
import {
  createTLStore,
  defaultAddFontsFromNode,
  defaultBindingUtils,
  defaultShapeTools,
  defaultShapeUtils,
  defaultTools,
  Editor,
  tipTapDefaultExtensions,
} from 'tldraw'
import { readPage } from '../src/canvas/editor-canvas'
import { ReloadMemory } from '../src/executor/memory'
import { Executor } from '../src/executor/executor'
import type { Ack, ActionEnvelope, Resync, WireAction } from '../src/protocol.gen'

export function makeEditor(): Editor {
  const div = document.createElement('div')
  document.body.appendChild(div)
  return new Editor({
    store: createTLStore({ shapeUtils: defaultShapeUtils, bindingUtils: defaultBindingUtils }),
    shapeUtils: defaultShapeUtils,
    bindingUtils: defaultBindingUtils,
    tools: [...defaultTools, ...defaultShapeTools],
    getContainer: () => div,
    textOptions: { tipTapConfig: { extensions: tipTapDefaultExtensions }, addFontsFromNode: defaultAddFontsFromNode },
  } as never)
}

export interface Rig {
  editor: Editor
  memory: ReloadMemory
  executor: Executor
  acks: Ack[]
  resyncs: Resync[]
  todos: unknown[]
  viewports: unknown[]
  /** What each `drew` callback reported: [sessionId, shape ids]. */
  drawn: Array<[string, string[]]>
  host: { value: boolean }
}

export function makeRig(opts: { storage?: Storage; key?: string; editor?: Editor; applies?: () => boolean; now?: () => number } = {}): Rig {
  const editor = opts.editor ?? makeEditor()
  const memory = new ReloadMemory(opts.storage ?? null, opts.key ?? 'steward:test', () => editor.store.getStoreSnapshot('document'), 0)
  const acks: Ack[] = []
  const resyncs: Resync[] = []
  const todos: unknown[] = []
  const viewports: unknown[] = []
  const drawn: Array<[string, string[]]> = []
  const host = { value: true }
  const executor = new Executor({
    editor,
    memory,
    appliesCanvas: opts.applies ?? (() => true),
    isHost: () => host.value,
    sendAck: (a) => acks.push(a),
    sendResync: (r) => resyncs.push(r),
    ui: { todo: (_s, items) => todos.push(items), setViewport: (b) => viewports.push(b), drew: (s, ids) => drawn.push([s, ids]) },
    now: opts.now,
  })
  return { editor, memory, executor, acks, resyncs, todos, viewports, drawn, host }
}

let counter = 0
export function env(sessionId: string, seq: number, actions: Array<Partial<WireAction> & { name: WireAction['name'] }>, partial?: boolean): ActionEnvelope {
  return {
    v: 'tldraw-actions/1',
    sessionId,
    seq,
    partial: partial ?? null,
    ts: 0,
    actions: actions.map((a) => ({ id: a.id ?? `a${++counter}`, name: a.name, params: a.params ?? {} })),
  }
}

export function page(editor: Editor) {
  return Object.fromEntries([...readPage(editor)].map(([k, v]) => [k, v]))
}

export const geo = (id: string, x: number, y: number, w = 100, h = 50, extra: Record<string, unknown> = {}) => ({
  name: 'create_shape' as const,
  id: `c-${id}`,
  params: { id, type: 'geo', x, y, props: { geo: 'rectangle', w, h, color: 'blue', text: '', ...extra } },
})
