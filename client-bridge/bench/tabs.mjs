// Tabs for a model by hand (docs/MODEL-BY-HAND.md): named Chromium tabs on the demo page of one
// room, kept open by `serve` and commanded from any shell over a Unix socket (a path on disk,
// so it reaches into the network namespace the stack runs in).
//
//   node tabs.mjs serve --page URL --room ROOM [--tab NAME[:WxH]]... [--socket PATH] [--out DIR]
//   node tabs.mjs open NAME[:WxH]          another tab, named NAME (its LiveKit identity)
//   node tabs.mjs viewport NAME WxH        resize a tab's window
//   node tabs.mjs pan NAME X Y             centre a tab's view on page point (X, Y), same zoom
//   node tabs.mjs prompt NAME TEXT...      ask as NAME ("project: ..." too; --fairies a,b picks them); waits for the run
//        [--no-wait] [--timeout S]         to be done/canceled/error (default 1800 s)
//   node tabs.mjs summon NAME FAIRY [--personality P] [--color C]   NAME summons a fairy into the crew
//   node tabs.mjs wait NAME [SESSION]      wait for a run (the tab's last one by default)
//   node tabs.mjs shot [NAME...] [--out DIR] [--prefix P]
//                                          PNG of each tab's canvas as its user sees it, and
//                                          P-fit.png: every shape, zoomed to fit
//   node tabs.mjs shapes NAME [--out FILE] the tab's shapes and bindings as canonical JSON
//                                          (two equal canvases give equal files)
//   node tabs.mjs status | close
// Every command prints one JSON object. The socket defaults to $STEWARD_TABS_SOCKET or
// .data/by-hand/tabs.sock.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { request, createServer } from 'node:http'
import { dirname, join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { snapshot } from '../e2e/snapshot.mjs'

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const TERMINAL = ['done', 'canceled', 'error']
const JOIN_MS = 30_000

function parseArgs(argv) {
  const opts = { _: [], tab: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--no-wait') opts.noWait = true
    else if (a.startsWith('--')) {
      const key = a.slice(2)
      const value = argv[++i]
      if (value === undefined) throw new Error(`${a} needs a value`)
      if (key === 'tab') opts.tab.push(value)
      else opts[key] = value
    } else opts._.push(a)
  }
  return opts
}

function parseSize(text, fallback = { width: 1280, height: 800 }) {
  if (!text) return fallback
  const m = /^(\d+)x(\d+)$/.exec(text)
  if (!m) throw new Error(`viewport ${text}: want WIDTHxHEIGHT, e.g. 1280x800`)
  return { width: Number(m[1]), height: Number(m[2]) }
}

// ---- the server side: one browser, one context (own storage, own identity) per tab ----

async function serve(opts) {
  if (!opts.page || !opts.room) throw new Error('serve needs --page URL and --room ROOM')
  const socket = resolve(opts.socket)
  const outDir = resolve(opts.out ?? 'docs/real-model/shots')
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: FLAGS })
  const tabs = new Map() // name -> { page, context, lastSession }

  const tab = (name) => {
    const t = tabs.get(name)
    if (!t) throw new Error(`no tab ${name} (open: ${[...tabs.keys()].join(', ') || 'none'})`)
    return t
  }

  async function open(spec) {
    const [name, size] = spec.split(':')
    if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`tab name ${name}: letters, digits, - and _ only`)
    if (tabs.has(name)) throw new Error(`tab ${name} is open already`)
    const context = await browser.newContext({ viewport: parseSize(size) })
    // The demo keeps its identity in sessionStorage: seed it so the tab joins as NAME.
    await context.addInitScript((id) => sessionStorage.setItem('steward-demo:identity', id), name)
    const page = await context.newPage()
    page.on('pageerror', (e) => process.stderr.write(`[${name}] page error: ${e.message}\n`))
    tabs.set(name, { page, context, lastSession: null })
    await page.goto(`${opts.page}/?room=${encodeURIComponent(opts.room)}`)
    await page.waitForFunction(
      () => {
        const st = window.__steward?.handle.state
        return st && st.status === 'connected' && st.stewardPresent
      },
      null,
      { timeout: JOIN_MS },
    )
    return { tab: name, identity: await page.evaluate(() => window.__steward.identity), viewport: page.viewportSize() }
  }

  async function waitRun(name, sid, timeoutS) {
    const t = tab(name)
    sid = sid ?? t.lastSession
    if (!sid) throw new Error(`tab ${name} has no run to wait for`)
    try {
      await t.page.waitForFunction(([s, term]) => term.includes(window.__steward.handle.state.sessions[s]?.status), [sid, TERMINAL], {
        timeout: timeoutS * 1000,
        polling: 250,
      })
    } catch {
      return { sessionId: sid, status: 'timeout', waitedS: timeoutS }
    }
    const status = await t.page.evaluate((s) => window.__steward.handle.state.sessions[s], sid)
    return { sessionId: sid, status: status.status, detail: status }
  }

  async function shot(names, dir, prefix) {
    mkdirSync(dir, { recursive: true })
    const files = []
    for (const name of names.length ? names : [...tabs.keys()]) {
      const file = join(dir, `${prefix}${name}.png`)
      await tab(name).page.locator('.canvas').screenshot({ path: file })
      files.push(file)
    }
    const first = [...tabs.values()][0]
    if (first) {
      // Every shape on the page, zoomed to fit, whatever any user's view is.
      const b64 = await first.page.evaluate(async () => {
        const editor = window.__steward.editor
        const ids = [...editor.getCurrentPageShapeIds()]
        if (!ids.length) return null
        const { blob } = await editor.toImage(ids, { format: 'png', background: true, padding: 32, scale: 1 })
        const bytes = new Uint8Array(await blob.arrayBuffer())
        let s = ''
        for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
        return btoa(s)
      })
      if (b64) {
        const file = join(dir, `${prefix}fit.png`)
        writeFileSync(file, Buffer.from(b64, 'base64'))
        files.push(file)
      }
    }
    return { files }
  }

  const commands = {
    open: ({ _ }) => open(_[0]),
    async pan({ _ }) {
      const [name, ...xy] = _
      const [x, y] = xy.map(Number)
      if (xy.length !== 2 || !Number.isFinite(x) || !Number.isFinite(y)) throw new Error('pan needs NAME X Y (page coordinates)')
      // The user's own camera move: the tab publishes its new view as it would after a drag.
      const view = await tab(name).page.evaluate(([px, py]) => {
        const editor = window.__steward.editor
        editor.centerOnPoint({ x: px, y: py }, { immediate: true })
        const b = editor.getViewportPageBounds()
        return { x: b.x, y: b.y, w: b.w, h: b.h }
      }, [x, y])
      return { tab: name, view }
    },
    async viewport({ _ }) {
      await tab(_[0]).page.setViewportSize(parseSize(_[1]))
      return { tab: _[0], viewport: tab(_[0]).page.viewportSize() }
    },
    async prompt(args) {
      const [name, ...words] = args._
      const text = words.join(' ')
      if (!text) throw new Error('prompt needs NAME and the text')
      const t = tab(name)
      // `--fairies fairy-2,fairy-3`: the fairies the prompt is for (one solo, two a duo, more a project).
      const extra = args.fairies ? { fairies: String(args.fairies).split(',').filter(Boolean) } : {}
      const reply = await t.page.evaluate(([m, x]) => window.__steward.handle.prompt(m, x), [text, extra])
      if (!reply.sessionId) return { tab: name, reply }
      t.lastSession = reply.sessionId
      if (args.noWait) return { tab: name, sessionId: reply.sessionId, status: 'started' }
      return { tab: name, ...(await waitRun(name, reply.sessionId, Number(args.timeout ?? 1800))) }
    },
    async summon(args) {
      const [name, fairyName] = args._
      if (!fairyName) throw new Error('summon needs NAME and the fairy\'s name')
      const request = { name: String(fairyName), ...(args.personality ? { personality: String(args.personality) } : {}), ...(args.color ? { color: String(args.color) } : {}) }
      const reply = await tab(name).page.evaluate((r) => window.__steward.handle.summon(r), request)
      return { tab: name, reply }
    },
    wait: (args) => waitRun(args._[0], args._[1], Number(args.timeout ?? 1800)),
    shot: (args) => shot(args._, resolve(args.out ?? outDir), args.prefix ? `${args.prefix}-` : ''),
    async shapes(args) {
      const name = args._[0]
      const json = await snapshot(tab(name))
      if (!args.out) return { tab: name, records: JSON.parse(json) }
      writeFileSync(resolve(args.out), json)
      return { tab: name, file: resolve(args.out), records: JSON.parse(json).length }
    },
    async status() {
      const out = {}
      for (const [name, t] of tabs) {
        out[name] = await t.page.evaluate(() => {
          const st = window.__steward.handle.state
          const runs = Object.fromEntries(Object.entries(st.sessions).map(([k, v]) => [k, v.status]))
          return { connection: st.status, shapes: window.__steward.editor.getCurrentPageShapeIds().size, runs }
        })
        out[name].viewport = t.page.viewportSize()
      }
      return { room: opts.room, tabs: out }
    },
    async close() {
      setTimeout(() => shutdown(0), 50)
      return { closed: [...tabs.keys()] }
    },
  }

  for (const spec of opts.tab) {
    const opened = await open(spec)
    process.stdout.write(`${JSON.stringify(opened)}\n`)
  }
  mkdirSync(dirname(socket), { recursive: true })
  rmSync(socket, { force: true })
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', async () => {
      let reply
      try {
        const msg = JSON.parse(body)
        const fn = commands[msg.cmd]
        if (!fn) throw new Error(`unknown command ${msg.cmd}`)
        reply = { ok: true, ...(await fn(msg.args)) }
      } catch (err) {
        reply = { ok: false, error: String(err?.message ?? err) }
      }
      res.end(JSON.stringify(reply))
    })
  })
  server.requestTimeout = 0 // a prompt waits as long as the person takes to answer
  server.listen(socket)
  async function shutdown(code) {
    server.close()
    rmSync(socket, { force: true })
    await browser.close().catch(() => {})
    process.exit(code)
  }
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => shutdown(0))
  process.stdout.write(`${JSON.stringify({ ready: true, room: opts.room, socket, tabs: [...tabs.keys()] })}\n`)
}

// ---- the client side: one command to the serving process ----

function send(socket, cmd, args) {
  return new Promise((ok, fail) => {
    const req = request({ socketPath: socket, path: '/', method: 'POST' }, (res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => ok(body))
    })
    req.on('error', (err) => fail(new Error(`no tabs server on ${socket} (${err.code}): start one with \`tabs.mjs serve\``)))
    req.end(JSON.stringify({ cmd, args }))
  })
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2)
  const opts = parseArgs(rest)
  opts.socket = opts.socket ?? process.env.STEWARD_TABS_SOCKET ?? '.data/by-hand/tabs.sock'
  if (!cmd || cmd === 'help' || cmd === '--help') {
    process.stdout.write('usage: tabs.mjs serve|open|viewport|pan|prompt|wait|shot|shapes|status|close ... (see the top of tabs.mjs)\n')
    return
  }
  if (cmd === 'serve') return serve(opts)
  const reply = await send(resolve(opts.socket), cmd, opts)
  process.stdout.write(`${reply}\n`)
  if (!JSON.parse(reply).ok) process.exitCode = 1
}

main().catch((err) => {
  process.stderr.write(`${err.message ?? err}\n`)
  process.exit(1)
})
