// End-to-end, host mode with tldraw sync: tldraw's own sync server (a `TLSocketRoom` in a Node
// process, test-apps/tldraw-sync/sync-server.mjs), Chromium tabs of a page that syncs its
// document through it with `useSync`, a real livekit-server, Postgres and the steward
// (scripted model) with STEWARD_APPLY_MODE=host. Only the host tab applies the agent's edits;
// tldraw sync carries them to the others. Run inside the network namespace
// (ops/netns-run.sh): libwebrtc ignores loopback interfaces.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { matchesOutbox as agreeing, snapshot } from './snapshot.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const bridge = resolve(here, '..')
const repo = resolve(bridge, '..')
const app = join(bridge, 'test-apps', 'tldraw-sync')
const results = join(bridge, 'test-results')
const ROOM = `sync-${Date.now().toString(36)}`
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const WAIT = 30_000
const DRAW = 'draw a flow chart of our signup'

const children = []
const contexts = []
const tabs = {}
let sync // {url, http}: the sync server
let stack // {page, ...}: the steward's HTTP API

/** Starts a child process and resolves with the first JSON line it prints (60 s bound). */
function startChild(what, cmd, args, opts) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], ...opts })
    children.push(child)
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 60 s\n${err.slice(-3000)}`)), 60_000)
    child.stdout.on('data', (d) => {
      out += d
      if (process.env.E2E_VERBOSE) process.stderr.write(d)
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (line) {
        clearTimeout(timer)
        resolvePromise(JSON.parse(line))
      }
    })
    child.stderr.on('data', (d) => {
      err += d
      if (process.env.E2E_VERBOSE) process.stderr.write(d)
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${what} exited with ${code}\n${err.slice(-3000)}`))
    })
  })
}

async function openTab(name) {
  const dir = mkdtempSync(join(tmpdir(), `steward-sync-${name}-`))
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
  })
  contexts.push({ context, dir })
  const page = context.pages()[0] ?? (await context.newPage())
  page.on('pageerror', (e) => console.error(`[${name}] page error:`, e.stack ?? e.message))
  if (process.env.E2E_VERBOSE) page.on('console', (m) => console.error(`[${name}] ${m.text()}`))
  await page.goto(`${stack.page}/?room=${ROOM}&sync=${encodeURIComponent(sync.url)}`)
  await page.waitForFunction(
    () => {
      const s = window.__steward?.handle.state
      return window.__sync?.status === 'synced-remote' && s && s.status === 'connected' && s.stewardPresent && s.host
    },
    null,
    { timeout: WAIT },
  )
  const tab = { name, context, page, identity: await page.evaluate(() => window.__steward.identity) }
  tabs[name] = tab
  return tab
}

// The sync server's shapes and bindings, canonical as snapshot() gives a tab's.
async function serverSnapshot() {
  const res = await fetch(`${sync.http}/doc/${ROOM}`)
  assert.equal(res.status, 200)
  const stable = (v) =>
    Array.isArray(v) ? v.map(stable) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, stable(v[k])])) : v
  const recs = (await res.json()).filter((r) => r.typeName === 'shape' || r.typeName === 'binding').sort((a, b) => (a.id < b.id ? -1 : 1))
  return JSON.stringify(recs.map(stable))
}

/** Every tab's canvas and the sync server's document become the same (bounded). */
async function converge(list, label) {
  const deadline = Date.now() + WAIT
  let snaps = []
  while (Date.now() < deadline) {
    snaps = [...(await Promise.all(list.map(snapshot))), await serverSnapshot()]
    if (snaps.every((s) => s === snaps[0])) return JSON.parse(snaps[0])
    await new Promise((r) => setTimeout(r, 250))
  }
  const names = [...list.map((t) => t.name), 'sync server']
  const [a, ...rest] = snaps.map((s) => new Map(JSON.parse(s).map((r) => [r.id, JSON.stringify(r)])))
  const diffs = []
  for (const [i, b] of rest.entries()) {
    for (const id of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(id) !== b.get(id)) diffs.push(`${names[0]} vs ${names[i + 1]} ${id}:\n  ${a.get(id)}\n  ${b.get(id)}`)
    }
  }
  assert.fail(`${label}: canvases differ\n${diffs.slice(0, 6).join('\n')}`)
}

const matchesOutbox = (list, label) => agreeing(stack.agrees, list, label, WAIT)

async function prompt(tab, message) {
  const reply = await tab.page.evaluate((m) => window.__steward.handle.prompt(m), message)
  assert.ok(reply.sessionId, `prompt refused: ${reply.error}`)
  return reply.sessionId
}

const waitStatus = (tab, sid, wanted = 'done') =>
  tab.page.waitForFunction(([s, w]) => window.__steward.handle.state.sessions[s]?.status === w, [sid, wanted], { timeout: WAIT })
const applied = (tab) => tab.page.evaluate(() => window.__steward.handle.executor.appliedLog.length)
const shapes = (recs) => recs.filter((r) => r.typeName === 'shape')

before(async () => {
  mkdirSync(results, { recursive: true })
  sync = await startChild('the sync server', process.execPath, [join(app, 'sync-server.mjs')], { cwd: bridge })
  stack = await startChild('the stack', 'uv', ['run', '--frozen', 'python', join(here, 'stack.py'), ROOM, join(app, 'dist')], {
    cwd: repo,
    env: {
      ...process.env,
      STEWARD_APPLY_MODE: 'host',
      // Slower than the default, so the host can leave while a run is still streaming.
      STEWARD_SCRIPTED_TOKENS_PER_S: '150',
      STEWARD_LOG_FORMAT: 'json',
      STEWARD_LOG_LEVEL: process.env.STEWARD_LOG_LEVEL ?? 'warning',
    },
  })
  // One after another: the first tab to join is the host.
  await openTab('t1')
  await openTab('t2')
  await openTab('t3')
})

after(async () => {
  for (const { context, dir } of contexts) {
    await context.close().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
  for (const child of children) {
    child.stdin.end()
    child.kill('SIGTERM')
  }
})

let firstRunShapes = 0

test("a prompt draws: the host applies, tldraw sync brings the agent's edits to every tab and the server", async (t) => {
  const { t1, t2, t3 } = tabs
  for (const tab of [t1, t2, t3]) assert.equal(await tab.page.evaluate(() => window.__steward.handle.state.host), t1.identity)
  const started = Date.now()
  const sid = await prompt(t2, DRAW)
  for (const tab of [t1, t2, t3]) await waitStatus(tab, sid)
  const ran = Date.now()
  const recs = await converge([t1, t2, t3], 'after a run')
  t.diagnostic(`run ${ran - started} ms, then identical everywhere in ${Date.now() - ran} ms`)
  firstRunShapes = shapes(recs).length
  assert.ok(firstRunShapes >= 4, `the run drew shapes: ${firstRunShapes}`)
  assert.equal(await matchesOutbox([t1, t2, t3], 'after a run'), firstRunShapes)
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), 'no shape left locked')
  // Only the host applied envelopes: the others' canvases came through tldraw sync.
  assert.ok((await applied(t1)) > 0, 'the host applied the run')
  assert.deepEqual([await applied(t2), await applied(t3)], [0, 0], 'only the host applies in host mode')
})

test('a tab that joins late sees the drawing', async () => {
  const t4 = await openTab('t4')
  const recs = await converge([tabs.t1, t4], 'for a late joiner')
  assert.equal(shapes(recs).length, firstRunShapes)
  await matchesOutbox([t4], 'for a late joiner')
  assert.equal(await applied(t4), 0, 'the late joiner got the drawing from tldraw sync, not from a replay')
  assert.equal(await t4.page.evaluate(() => window.__steward.handle.state.host), tabs.t1.identity)
})

test('the host tab closes mid-run and the run completes through another host', async () => {
  const { t1, t2, t3, t4 } = tabs
  const before = await applied(t1)
  const sid = await prompt(t2, DRAW)
  await t1.page.waitForFunction((k) => window.__steward.handle.executor.appliedLog.length > k, before, { timeout: WAIT })
  const midRun = await t2.page.evaluate((s) => window.__steward.handle.state.sessions[s]?.status ?? 'running', sid)
  assert.notEqual(midRun, 'done', 'the host must leave while the run is still going')
  // Like a person closing the tab: the page unloads (livekit-client leaves on pagehide).
  await t1.page.close({ runBeforeUnload: true })
  await t1.context.close()
  const rest = [t2, t3, t4]
  for (const tab of rest) await waitStatus(tab, sid)
  for (const tab of rest) {
    await tab.page.waitForFunction((h) => { const s = window.__steward.handle.state.host; return !!s && s !== h }, t1.identity, { timeout: WAIT })
  }
  const hosts = await Promise.all(rest.map((tab) => tab.page.evaluate(() => window.__steward.handle.state.host)))
  assert.ok(hosts.every((h) => h === hosts[0]), `tabs disagree about the host: ${hosts}`)
  const host = rest.find((tab) => tab.identity === hosts[0])
  assert.ok(host, `host ${hosts[0]} is not a remaining tab`)
  assert.ok((await applied(host)) > 0, 'the new host applied the rest of the run')
  const recs = await converge(rest, 'after the host left')
  // Every record of every remaining tab is the durable outbox's: nothing lost, doubled or
  // left as a preview across the change of host.
  assert.equal(await matchesOutbox(rest, 'after the host left'), shapes(recs).length)
  assert.equal(shapes(recs).length, 2 * firstRunShapes, 'the second drawing is whole')
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), 'a preview was left locked')
  await host.page.evaluate(() => window.__steward.editor.zoomToFit({ animation: { duration: 0 } }))
  await host.page.waitForTimeout(300)
  await host.page.screenshot({ path: join(results, 'e2e-tldraw-sync.png') })
})
