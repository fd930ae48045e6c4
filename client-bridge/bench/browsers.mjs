// Bench driver: real Chromium tabs on the built demo page, commanded by the Python bench
// (`steward bench latency --browsers`) over stdin/stdout, one JSON object per line each way.
// Every reply is `{id, ok, ...}` or `{id, ok: false, error}`. Times sent back are wall-clock
// epoch milliseconds taken in the page (performance.timeOrigin + performance.now()), which
// the bench maps onto its own clock; the `clock` command lets it check that mapping.
// Must run inside the network namespace (ops/netns-run.sh): libwebrtc ignores loopback.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { chromium } from 'playwright-core'
import { snapshot } from '../e2e/snapshot.mjs'

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const WAIT = 30_000
const TERMINAL = ['done', 'canceled', 'error']
const tabs = [] // { index, room, context, page, dir, identity }

const send = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// Installed in every tab once it is ready: timestamps of final applications (ids, seq order),
// of raw probes in the room's data callback (steward_tools/bench/raw.py: no bridge logic between)
// and of each context request's stages (RPC handler, toImage, byte streams).
function installHooks() {
  const s = window.__steward
  const now = () => performance.timeOrigin + performance.now()
  const bench = { applied: {}, raw: {}, lastSeq: {}, duplicates: 0, outOfOrder: 0, requests: [], current: null }
  window.__bench = bench
  const decoder = new TextDecoder()
  s.room.on('dataReceived', (payload, _participant, _kind, topic) => {
    if (topic !== 'bench:raw') return
    const t = now()
    const id = JSON.parse(decoder.decode(payload)).probe
    if (!(id in bench.raw)) bench.raw[id] = t
  })
  const ex = s.handle.executor
  const apply = ex.applyEnvelope
  if (typeof apply !== 'function') throw new Error('executor.applyEnvelope not found: the bench hook needs updating')
  ex.applyEnvelope = function (env) {
    const before = this.appliedLog.length
    const result = apply.call(this, env)
    if (!env.partial) {
      const t = now()
      for (const id of this.appliedLog.slice(before)) {
        if (id in bench.applied) bench.duplicates++
        else bench.applied[id] = t
      }
      const last = bench.lastSeq[env.sessionId] ?? 0
      if (env.seq < last) bench.outOfOrder++
      bench.lastSeq[env.sessionId] = Math.max(last, env.seq)
    }
    return result
  }
  // livekit-client 2.23 keeps the handlers in Room.rpcServerManager (internal, checked below).
  const handlers = s.room.rpcServerManager?.rpcHandlers ?? s.room.rpcHandlers
  const answer = handlers?.get('steward.context')
  if (typeof answer !== 'function') throw new Error('steward.context handler not found: the bench hook needs updating')
  handlers.set('steward.context', async (data) => {
    const rec = { requestId: JSON.parse(data.payload).requestId, enter: now() }
    bench.current = rec
    bench.requests.push(rec)
    // Where the screenshot came from: 'cache' (pre-rendered), 'joined' (a pre-render under way) or 'render'.
    const shots = s.handle.screenshots
    if (shots) shots.stats.lastSource = null
    try {
      return await answer(data)
    } finally {
      rec.exit = now()
      rec.cache = shots?.stats.lastSource ?? null
      bench.current = null
    }
  })
  const editor = s.editor
  const toImage = editor.toImage.bind(editor)
  editor.toImage = async (...args) => {
    const rec = bench.current ?? {}
    rec.toImageStart = now()
    const result = await toImage(...args)
    rec.toImageEnd = now()
    rec.image = { width: result.width, height: result.height, bytes: result.blob.size, type: result.blob.type }
    return result
  }
  const lp = s.room.localParticipant
  const sendBytes = lp.sendBytes.bind(lp)
  lp.sendBytes = async (bytes, opts) => {
    const rec = bench.current ?? {}
    const key = opts?.topic ?? 'bytes'
    rec[key] = { start: now(), bytes: bytes.byteLength, mimeType: opts?.mimeType }
    try {
      return await sendBytes(bytes, opts)
    } finally {
      rec[key].end = now()
    }
  }
}

async function openTab(page, room, index) {
  const dir = mkdtempSync(join(tmpdir(), `steward-bench-chromium-${index}-`))
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
  })
  const tab = { index, room, context, page: context.pages()[0] ?? (await context.newPage()), dir, identity: null }
  tabs.push(tab)
  tab.page.on('pageerror', (e) => process.stderr.write(`[tab ${index}] page error: ${e.stack ?? e.message}\n`))
  await tab.page.goto(`${page}/?room=${encodeURIComponent(room)}`)
  await tab.page.waitForFunction(
    () => {
      const st = window.__steward?.handle.state
      return st && st.status === 'connected' && st.stewardPresent && st.host
    },
    null,
    { timeout: WAIT },
  )
  await tab.page.evaluate(installHooks)
  tab.identity = await tab.page.evaluate(() => window.__steward.identity)
  return tab
}

const roomTabs = (room) => tabs.filter((t) => t.room === room)
const tabAt = (i) => {
  const tab = tabs.find((t) => t.index === i)
  if (!tab) throw new Error(`no tab ${i}`)
  return tab
}


const finals = (tab) => tab.page.evaluate(() => Object.keys(window.__bench.applied).length)

// Every tab of the room has the same number of final applications, unchanged for quietMs.
async function settle(list, quietMs = 300, limitMs = WAIT) {
  let last = ''
  let since = Date.now()
  const deadline = Date.now() + limitMs
  while (Date.now() < deadline) {
    const counts = await Promise.all(list.map(finals))
    const key = counts.join(',')
    if (key !== last) {
      last = key
      since = Date.now()
    } else if (new Set(counts).size === 1 && Date.now() - since >= quietMs) return true
    await sleep(20)
  }
  return false
}

// Seed `count` shapes fully inside `bounds` on one tab only (a remote-source change, so the
// relay connector does not send them to the steward): geo shapes, some labelled, text, arrows
// (`text: false`: the same without labels and text shapes, to show what text costs).
function seedShapes({ count, bounds, text = true }) {
  const { editor } = window.__steward
  const cols = Math.ceil(Math.sqrt((count * bounds.w) / bounds.h))
  const rows = Math.ceil(count / cols)
  const cw = bounds.w / cols
  const ch = bounds.h / rows
  const geos = ['rectangle', 'ellipse', 'triangle', 'diamond', 'hexagon', 'star', 'cloud', 'oval']
  const colors = ['black', 'blue', 'green', 'red', 'orange', 'violet', 'light-blue', 'yellow']
  const fills = ['none', 'semi', 'solid', 'pattern']
  // One-character labels: anything longer wraps in a 28 px shape and grows it out of its cell.
  const words = ['A', 'B', 'C', '1', '2', '3', 'x', 'y']
  const shapes = []
  for (let i = 0; i < count; i++) {
    const x = bounds.x + (i % cols) * cw + 2
    const y = bounds.y + Math.floor(i / cols) * ch + 2
    const w = cw - 4
    const h = ch - 4
    const id = `shape:seed${i}`
    if (i % 10 === 9) {
      shapes.push({ id, type: 'arrow', x, y, props: { start: { x: 0, y: 0 }, end: { x: w, y: h }, color: colors[i % colors.length] } })
    } else if (text && i % 10 === 8) {
      shapes.push({ id, type: 'text', x, y, props: { richText: window.__tldrawToRichText(`t${i % 100}`), size: 's', autoSize: true, scale: 0.5, color: colors[i % colors.length] } })
    } else {
      const labelled = text && i % 4 === 0
      shapes.push({
        id,
        type: 'geo',
        x,
        y,
        props: {
          w,
          h,
          geo: geos[i % geos.length],
          color: colors[(i >> 3) % colors.length],
          fill: fills[i % fills.length],
          size: 's',
          ...(labelled ? { richText: window.__tldrawToRichText(words[i % words.length]), labelColor: 'black', font: 'sans' } : {}),
        },
      })
    }
  }
  editor.store.mergeRemoteChanges(() => {
    editor.deleteShapes([...editor.getCurrentPageShapeIds()])
    editor.createShapes(shapes)
  })
  const inside = [...editor.getCurrentPageShapeIds()].filter((id) => {
    const b = editor.getShapePageBounds(id)
    return b && b.x >= bounds.x && b.y >= bounds.y && b.x + b.w <= bounds.x + bounds.w && b.y + b.h <= bounds.y + bounds.h
  }).length
  return { shapes: editor.getCurrentPageShapeIds().size, inside }
}

// A tldraw rich-text document for a plain string (the demo bundle does not export toRichText).
function installRichText() {
  window.__tldrawToRichText = (text) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] })
}

const commands = {
  async open({ page, room, count }) {
    const base = tabs.length
    const opened = await Promise.all(Array.from({ length: count }, (_, i) => openTab(page, room, base + i)))
    const userAgent = opened[0] ? await opened[0].page.evaluate(() => navigator.userAgent) : null
    return { tabs: opened.map((t) => ({ index: t.index, identity: t.identity, dir: t.dir })), userAgent }
  },
  async clock({ tab }) {
    return { wallMs: await tabAt(tab).page.evaluate(() => performance.timeOrigin + performance.now()) }
  },
  // `hinted[n]`: the user "types" prompt n for `typingMs` after a composing hint (the bridge's
  // `handle.composing()`, as the demo's prompt box sends it); otherwise it is sent cold.
  async run({ room, messages, prompts, hinted = [], typingMs = 0, timeoutMs = WAIT }) {
    const list = roomTabs(room)
    const prompter = list[0]
    const out = { sessions: [], hinted: [], statuses: [], errors: [], settled: true, elapsedMs: 0 }
    const started = Date.now()
    for (let n = 0; n < prompts; n++) {
      const hint = Boolean(hinted[n]) && typingMs > 0
      if (hint) {
        await prompter.page.evaluate(() => window.__steward.handle.composing())
        await sleep(typingMs)
      }
      const reply = await prompter.page.evaluate((m) => window.__steward.handle.prompt(m), messages[n % messages.length])
      if (!reply.sessionId) {
        out.errors.push(`refused: ${reply.error}`)
        await sleep(1000)
        continue
      }
      const sid = reply.sessionId
      out.sessions.push(sid)
      out.hinted.push(hint)
      try {
        await prompter.page.waitForFunction(([s, t]) => t.includes(window.__steward.handle.state.sessions[s]?.status), [sid, TERMINAL], { timeout: timeoutMs })
        out.statuses.push(await prompter.page.evaluate((s) => window.__steward.handle.state.sessions[s].status, sid))
      } catch {
        out.statuses.push('timeout')
      }
      out.settled = (await settle(list)) && out.settled
    }
    out.elapsedMs = Date.now() - started
    return out
  },
  async report({ room }) {
    const list = roomTabs(room)
    const clients = {}
    for (const tab of list) {
      const b = await tab.page.evaluate(() => {
        const { applied, raw, duplicates, outOfOrder } = window.__bench
        return { applied, raw, duplicates, outOfOrder, shapes: window.__steward.editor.getCurrentPageShapeIds().size }
      })
      const canvas = createHash('sha256').update(await snapshot(tab)).digest('hex').slice(0, 16)
      clients[tab.identity] = { ...b, canvas }
    }
    return { clients }
  },
  async seed({ tab, count, bounds, text }) {
    const t = tabAt(tab)
    await t.page.evaluate(installRichText)
    return t.page.evaluate(seedShapes, { count, bounds, text })
  },
  async requests({ tab }) {
    return { requests: await tabAt(tab).page.evaluate(() => window.__bench.requests.map(({ requestId, enter, exit, toImageStart, toImageEnd, image, cache, ...rest }) => ({ requestId, enter, exit, toImageStart, toImageEnd, image, cache, streams: rest }))) }
  },
  // A one-pixel move of one shape (a remote-source change): the next context request misses
  // the host's screenshot cache and renders, as after any edit.
  async touch({ tab }) {
    return tabAt(tab).page.evaluate(() => {
      const { editor } = window.__steward
      const id = [...editor.getCurrentPageShapeIds()].sort()[0]
      const shape = editor.store.get(id)
      editor.store.mergeRemoteChanges(() => editor.store.put([{ ...shape, x: shape.x + (shape.x % 2 ? -1 : 1) }]))
      return { shape: id } // not `id`: that key is the driver's reply correlation
    })
  },
  async stats({ tab }) {
    return tabAt(tab).page.evaluate(() => ({ stats: { ...window.__steward.handle.screenshots?.stats }, requests: window.__bench.requests.length }))
  },
  // Resolves once the host's idle pre-render (if any) is done: timed renders run on a quiet page.
  async settle({ tab }) {
    return tabAt(tab).page.evaluate(async () => {
      await window.__steward.handle.screenshots?.settled()
      return { stats: { ...window.__steward.handle.screenshots?.stats } }
    })
  },
  async leave({ room }) {
    await closeTabs(roomTabs(room))
    return {}
  },
  // The page alone: `editor.toImage` with the connector's options, timed in the page.
  async render({ tab, bounds, count }) {
    return tabAt(tab).page.evaluate(
      async ({ bounds, count }) => {
        const { editor } = window.__steward
        await window.__steward.handle.screenshots?.settled() // not alongside the idle pre-render
        const ids = [...editor.getCurrentPageShapeIds()]
        const box = editor.getViewportPageBounds().clone()
        Object.assign(box, bounds)
        const out = []
        for (let i = 0; i < count; i++) {
          // The SVG export alone (building the SVG, embedding fonts and text styles) ...
          let t0 = performance.now()
          const svg = await editor.getSvgString(ids, { bounds: box, scale: 1, background: true, padding: 0 })
          const svgMs = performance.now() - t0
          // ... and the whole toImage (that export again, then rasterising and WebP encoding).
          t0 = performance.now()
          const { blob } = await editor.toImage(ids, { format: 'webp', bounds: box, scale: 1, pixelRatio: 1, background: true, quality: 0.6, padding: 0 })
          out.push({ ms: performance.now() - t0, bytes: blob.size, type: blob.type, svgMs, svgChars: svg?.svg.length ?? 0 })
        }
        return { renders: out }
      },
      { bounds, count },
    )
  },
  async close() {
    await closeAll()
    return {}
  },
}

const closeAll = () => closeTabs([...tabs])

async function closeTabs(list) {
  for (const t of list) tabs.splice(tabs.indexOf(t), 1)
  await Promise.all(
    list.map(async (t) => {
      await t.context.close().catch(() => {})
      rmSync(t.dir, { recursive: true, force: true })
    }),
  )
}

const lines = createInterface({ input: process.stdin })
let queue = Promise.resolve()
lines.on('line', (line) => {
  queue = queue.then(async () => {
    let msg
    try {
      msg = JSON.parse(line)
      const fn = commands[msg.cmd]
      if (!fn) throw new Error(`unknown command ${msg.cmd}`)
      send({ id: msg.id, ok: true, ...(await fn(msg)) })
      if (msg.cmd === 'close') process.exit(0)
    } catch (err) {
      send({ id: msg?.id ?? null, ok: false, error: String(err?.stack ?? err) })
    }
  })
})
// The bench closed our stdin (or died): close every browser we started, then leave.
lines.on('close', () => {
  queue.then(closeAll).finally(() => process.exit(0))
})
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => closeAll().finally(() => process.exit(0)))
send({ event: 'ready' })
