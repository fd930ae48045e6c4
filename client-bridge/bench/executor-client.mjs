// The browser's own executor outside a browser: the TypeScript Executor (src/executor) over a
// real tldraw Editor and store in jsdom, commanded by a Python participant
// (steward_tools/headless/executor_client.py) over stdin/stdout, one JSON object per line.
// Python carries the LiveKit transport (and the injected faults); everything a tab does with
// an envelope (order, gap buffer, exactly-once memory, fragments, partial reverts, the apply
// to tldraw, acks, resyncs, the gap retry timer) is the bridge's code, loaded from src/ as is.
//
// In:  {id, cmd: 'receive', envelopes: [...]} | {id, cmd: 'expect', sessionId, lastSeq}
//      {id, cmd: 'resyncAll'} | {id, cmd: 'page'} | {id, cmd: 'close'}
// Out: {id, ok, ...} replies, and events {event: 'ack'|'resync', body} (to publish),
//      {event: 'applied', sessionId, seq, partial, ids} (each envelope the executor applied).
import { createInterface } from 'node:readline'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { JSDOM } from 'jsdom'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const send = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`)

// The globals a page has (the vitest jsdom environment does the same).
const dom = new JSDOM('<!doctype html><html><body></body></html>', { pretendToBeVisual: true, url: 'http://localhost/' })
for (const key of Object.getOwnPropertyNames(dom.window)) {
  if (key in globalThis) continue
  Object.defineProperty(globalThis, key, { configurable: true, get: () => dom.window[key] })
}

const { createServer } = await import('vite')
// Vite compiles the TypeScript sources on the fly (as vitest does); dependencies load from
// node_modules.
const vite = await createServer({
  root,
  configFile: false,
  logLevel: 'error',
  appType: 'custom',
  server: { middlewareMode: true, hmr: false, ws: false },
  optimizeDeps: { noDiscovery: true },
})
const load = (path) => vite.ssrLoadModule(path)
const tl = await load('tldraw')
const { Executor } = await load('/src/executor/executor.ts')
const { ReloadMemory } = await load('/src/executor/memory.ts')
const { DelayedAcks } = await load('/src/executor/acks.ts')
const { readPage } = await load('/src/canvas/editor-canvas.ts')

const div = document.createElement('div')
document.body.appendChild(div)
const editor = new tl.Editor({
  store: tl.createTLStore({ shapeUtils: tl.defaultShapeUtils, bindingUtils: tl.defaultBindingUtils }),
  shapeUtils: tl.defaultShapeUtils,
  bindingUtils: tl.defaultBindingUtils,
  tools: [...tl.defaultTools, ...tl.defaultShapeTools],
  getContainer: () => div,
  textOptions: { tipTapConfig: { extensions: tl.tipTapDefaultExtensions }, addFontsFromNode: tl.defaultAddFontsFromNode },
})
const memory = new ReloadMemory(null, 'steward:node', () => editor.store.getStoreSnapshot('document'), 0)
// As the bridge does: acks leave delayed and merged, one per session per ACK_DELAY_MS at most.
const acks = new DelayedAcks((body) => send({ event: 'ack', body }))
const executor = new Executor({
  editor,
  memory,
  appliesCanvas: () => true,
  isHost: () => false,
  sendAck: (ack) => acks.add(ack),
  sendResync: (body) => send({ event: 'resync', body }),
  log: (msg, extra) => process.stderr.write(`${msg} ${JSON.stringify(extra ?? {})}\n`),
})
// Every envelope the executor applies, as it applies it (the browsers bench hooks the same way).
const applyEnvelope = executor.applyEnvelope
if (typeof applyEnvelope !== 'function') throw new Error('executor.applyEnvelope not found: update this driver')
executor.applyEnvelope = function (env) {
  const before = this.appliedLog.length
  const result = applyEnvelope.call(this, env)
  send({ event: 'applied', sessionId: env.sessionId, seq: env.seq, partial: env.partial === true, ids: this.appliedLog.slice(before) })
  return result
}
const retry = setInterval(() => executor.sequencer.retryGaps(), 1000)

const commands = {
  receive: ({ envelopes }) => executor.receiveAll(envelopes),
  expect: ({ sessionId, lastSeq }) => executor.sequencer.expect(sessionId, lastSeq),
  resyncAll: () => executor.resyncAll(),
  page: () => ({ page: [...readPage(editor).values()] }),
  close: async () => {
    clearInterval(retry)
    acks.flush?.()
    await vite.close()
    setImmediate(() => process.exit(0))
  },
}

const lines = createInterface({ input: process.stdin })
lines.on('line', async (line) => {
  let msg
  try {
    msg = JSON.parse(line)
    const out = await commands[msg.cmd](msg)
    send({ id: msg.id, ok: true, ...(out ?? {}) })
  } catch (err) {
    send({ id: msg?.id ?? null, ok: false, error: String(err?.stack ?? err) })
  }
})
lines.on('close', () => process.exit(0))
send({ event: 'ready' })
