// End-to-end, host mode with tldraw sync: tldraw's own sync server (a `TLSocketRoom` in a Node
// process, test-apps/tldraw-sync/sync-server.mjs), Chromium tabs of a page that syncs its
// document through it with `useSync`, a real livekit-server, Postgres and the steward
// (scripted model) with STEWARD_APPLY_MODE=host. Only the host tab applies the agent's edits;
// tldraw sync carries them to the others. Run inside the network namespace
// (ops/netns-run.sh): libwebrtc ignores loopback interfaces.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { WAIT, appliedCount, bridge, openTab as openStackTab, prompt, sameEverywhere, startProcess, startStack, stopStack, waitStatus } from './rig.mjs'
import { snapshot } from './snapshot.mjs'

const app = join(bridge, 'test-apps', 'tldraw-sync')
const results = join(bridge, 'test-results')
const ROOM = `sync-${Date.now().toString(36)}`
const DRAW = 'draw a flow chart of our signup'

const children = []
const tabList = []
const tabs = {}
let sync // {url, http}: the sync server
let stack // {page, ...}: the steward's HTTP API

/** A tab of the sync app in ROOM, once its document is synced and the bridge is ready. */
async function openTab(name) {
  const tab = await openStackTab(stack, name, ROOM, {
    query: `&sync=${encodeURIComponent(sync.url)}`,
    ready: () => {
      const s = window.__steward?.handle.state
      return window.__sync?.status === 'synced-remote' && s && s.status === 'connected' && s.stewardPresent && s.host
    },
  })
  tabList.push(tab)
  tab.identity = await tab.page.evaluate(() => window.__steward.identity)
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
const converge = (list, label) =>
  sameEverywhere(
    [...list.map((t) => t.name), 'sync server'],
    async () => [...(await Promise.all(list.map(snapshot))), await serverSnapshot()],
    label,
  )

const shapes = (recs) => recs.filter((r) => r.typeName === 'shape')

before(async () => {
  mkdirSync(results, { recursive: true })
  const syncServer = await startProcess('the sync server', process.execPath, [join(app, 'sync-server.mjs')], { cwd: bridge })
  children.push(syncServer.child)
  sync = syncServer.info
  const started = await startStack(ROOM, {
    dist: join(app, 'dist'),
    // Slower than the default, so the host can leave while a run is still streaming.
    env: { STEWARD_APPLY_MODE: 'host', STEWARD_SCRIPTED_TOKENS_PER_S: '150' },
  })
  children.push(started.child)
  stack = started.info
  // One after another: the first tab to join is the host.
  await openTab('t1')
  await openTab('t2')
  await openTab('t3')
})

after(async () => {
  for (const tab of tabList) await tab.close()
  await Promise.all(children.map(stopStack))
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
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), 'no shape left locked')
  // Only the host applied envelopes: the others' canvases came through tldraw sync.
  assert.ok((await appliedCount(t1)) > 0, 'the host applied the run')
  assert.deepEqual([await appliedCount(t2), await appliedCount(t3)], [0, 0], 'only the host applies in host mode')
})

test('a tab that joins late sees the drawing', async () => {
  const t4 = await openTab('t4')
  const recs = await converge([tabs.t1, t4], 'for a late joiner')
  assert.equal(shapes(recs).length, firstRunShapes)
  assert.equal(await appliedCount(t4), 0, 'the late joiner got the drawing from tldraw sync, not from a replay')
  assert.equal(await t4.page.evaluate(() => window.__steward.handle.state.host), tabs.t1.identity)
})

test('the host tab closes mid-run and the run completes through another host', async () => {
  const { t1, t2, t3, t4 } = tabs
  const before = await appliedCount(t1)
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
  assert.ok((await appliedCount(host)) > 0, 'the new host applied the rest of the run')
  const recs = await converge(rest, 'after the host left')
  assert.equal(shapes(recs).length, 2 * firstRunShapes, 'the second drawing is whole')
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), 'a preview was left locked')
  await host.page.evaluate(() => window.__steward.editor.zoomToFit({ animation: { duration: 0 } }))
  await host.page.waitForTimeout(300)
  await host.page.screenshot({ path: join(results, 'e2e-tldraw-sync.png') })
})
