// End-to-end: real Chromium tabs on the demo page, a real livekit-server and the steward
// (scripted runner). Must run inside the network namespace (ops/netns-run.sh): libwebrtc
// ignores loopback interfaces.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { matchesOutbox, snapshot } from './snapshot.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const bridge = resolve(here, '..')
const repo = resolve(bridge, '..')
const results = join(bridge, 'test-results')
const ROOM = `e2e-${Date.now().toString(36)}`
// Every tab's microphone is this file (espeak-ng speech, made in before()): used only when a
// tab opens its microphone.
const SPOKEN = join(mkdtempSync(join(tmpdir(), 'steward-e2e-voice-')), 'flow.wav')
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${SPOKEN}`]
const WAIT = 30_000

let stack
let stackInfo
const browsers = []
const tabs = {}

function startStack() {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('uv', ['run', '--frozen', 'python', join(here, 'stack.py'), ROOM, join(bridge, 'demo', 'dist')], {
      cwd: repo,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, STEWARD_LOG_FORMAT: 'json', STEWARD_LOG_LEVEL: process.env.STEWARD_LOG_LEVEL ?? 'warning' },
    })
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`stack did not start in 60 s\n${err.slice(-3000)}`)), 60_000)
    child.stdout.on('data', (d) => {
      out += d
      if (process.env.E2E_VERBOSE) process.stderr.write(d)
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (line) {
        clearTimeout(timer)
        resolvePromise({ child, info: JSON.parse(line) })
      }
    })
    child.stderr.on('data', (d) => {
      err += d
      if (process.env.E2E_VERBOSE) process.stderr.write(d)
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`stack exited with ${code}\n${err.slice(-3000)}`))
    })
  })
}

async function openTab(name, room = ROOM) {
  const dir = mkdtempSync(join(tmpdir(), `steward-chromium-${name}-`))
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
  })
  const page = context.pages()[0] ?? (await context.newPage())
  page.on('console', (m) => {
    if (process.env.E2E_VERBOSE && m.text().includes('[steward]')) console.error(`[${name}] ${m.text()}`)
  })
  page.on('pageerror', (e) => console.error(`[${name}] page error:`, e.stack ?? e.message))
  browsers.push({ context, dir })
  const tab = { name, context, page, dir }
  await page.goto(`${stackInfo.page}/?room=${room}`)
  await waitReady(tab)
  tabs[name] = tab
  return tab
}

async function waitReady(tab) {
  await tab.page.waitForFunction(
    () => {
      const s = window.__steward?.handle.state
      return s && s.status === 'connected' && s.stewardPresent && s.host
    },
    null,
    { timeout: WAIT },
  )
}


async function converge(list, label) {
  const deadline = Date.now() + WAIT
  let snaps = []
  while (Date.now() < deadline) {
    snaps = await Promise.all(list.map(snapshot))
    if (snaps.every((s) => s === snaps[0])) return JSON.parse(snaps[0])
    await new Promise((r) => setTimeout(r, 250))
  }
  // Name the records that differ, then fail.
  const [a, ...rest] = snaps.map((s) => new Map(JSON.parse(s).map((r) => [r.id, JSON.stringify(r)])))
  const diffs = []
  for (const [i, b] of rest.entries()) {
    for (const id of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(id) !== b.get(id)) diffs.push(`${list[0].name} vs ${list[i + 1].name} ${id}:\n  ${a.get(id)}\n  ${b.get(id)}`)
    }
  }
  assert.fail(`${label}: canvases differ\n${diffs.slice(0, 6).join('\n')}`)
}

async function prompt(tab, message) {
  const reply = await tab.page.evaluate((m) => window.__steward.handle.prompt(m), message)
  assert.ok(reply.sessionId, `prompt refused: ${reply.error}`)
  return reply.sessionId
}

const waitStatus = (tab, sid, wanted = 'done') =>
  tab.page.waitForFunction(([s, w]) => window.__steward.handle.state.sessions[s]?.status === w, [sid, wanted], { timeout: WAIT })

const appliedCount = (tab) => tab.page.evaluate(() => window.__steward.handle.executor.appliedLog.length)
const waitApplied = (tab, n) =>
  tab.page.waitForFunction((k) => window.__steward.handle.executor.appliedLog.length > k, n, { timeout: WAIT })

before(async () => {
  mkdirSync(results, { recursive: true })
  // A long lead: the steward subscribes to the microphone after the tab publishes it.
  const made = spawnSync('uv', ['run', '--frozen', 'python', '-m', 'steward_tools.voice.speech', SPOKEN, '1.5', 'steward, draw a flow chart of our signup'], { cwd: repo, encoding: 'utf8' })
  assert.equal(made.status, 0, `speech synthesis failed: ${made.stderr}`)
  ;({ child: stack, info: stackInfo } = await startStack())
  await openTab('t1')
  await openTab('t2')
  await openTab('t3')
})

after(async () => {
  for (const b of browsers) {
    await b.context.close().catch(() => {})
    rmSync(b.dir, { recursive: true, force: true })
  }
  if (stack) {
    stack.stdin.end()
    stack.kill('SIGTERM')
  }
})

test('the first tab is the host and every tab announces its capabilities', async () => {
  const hosts = await Promise.all(['t1', 't2', 't3'].map((n) => tabs[n].page.evaluate(() => [window.__steward.handle.state.host, window.__steward.identity])))
  const t1Identity = hosts[0][1]
  for (const [host] of hosts) assert.equal(host, t1Identity)
  const caps = await tabs.t2.page.evaluate(() => window.__steward.room.localParticipant.attributes['steward.capabilities'])
  assert.equal(caps, 'context,screenshot,apply')
})

// The screenshot of an area draws every shape that overlaps it, clipped to it, and the model's
// list of shapes in view names the same shapes.
test('a shape half inside the requested bounds is drawn (clipped) and listed', async () => {
  const { t1 } = tabs
  const area = { x: 20000, y: 20000, w: 400, h: 300 }
  const shapes = [
    // Left half inside, right half past the area's right edge.
    ['shape:half-in', 20300, 20050, 'red'],
    ['shape:all-out', 20600, 20050, 'blue'],
  ]
  await t1.page.evaluate((list) => {
    for (const [id, x, y, color] of list) {
      window.__steward.editor.createShape({ id, type: 'geo', x, y, props: { w: 200, h: 150, geo: 'rectangle', color, fill: 'fill' } })
    }
  }, shapes)
  const asker = await t1.page.evaluate(() => window.__steward.identity)
  const res = await fetch(stackInfo.context, { method: 'POST', body: JSON.stringify({ bounds: area, asker }) })
  assert.equal(res.status, 200, await res.clone().text())
  const got = await res.json()
  assert.equal(got.source, asker, "the asker's own tab answered")
  assert.ok(got.screenshot.length > 0, 'a screenshot came back')
  const bare = got.inView.map((id) => id.replace(/^shape:/, ''))
  assert.ok(bare.includes('half-in'), `the half-inside shape is listed: ${JSON.stringify(got.inView)}`)
  assert.ok(!bare.includes('all-out'), 'a shape outside the area is not listed')
  // Decode the image in the page; the area is under 800 px, so image pixels are page units.
  const pixels = await t1.page.evaluate(
    async ({ b64, type, points }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
      const bitmap = await createImageBitmap(new Blob([bytes], { type }))
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
      const ctx = canvas.getContext('2d')
      ctx.drawImage(bitmap, 0, 0)
      return { w: bitmap.width, h: bitmap.height, at: points.map(([x, y]) => Array.from(ctx.getImageData(x, y, 1, 1).data)) }
    },
    { b64: got.screenshot, type: got.screenshotType, points: [[350, 125], [390, 200], [100, 150]] },
  )
  assert.deepEqual([pixels.w, pixels.h], [400, 300])
  const red = ([r, g, b]) => r > 150 && r > g + 60 && r > b + 60
  assert.ok(red(pixels.at[0]) && red(pixels.at[1]), `the inside half is drawn red: ${JSON.stringify(pixels.at)}`)
  assert.ok(!red(pixels.at[2]), `empty canvas stays blank: ${JSON.stringify(pixels.at[2])}`)
  // Leave the canvas as it was for the tests that follow.
  await t1.page.evaluate((ids) => void window.__steward.editor.deleteShapes(ids), shapes.map(([id]) => id))
  for (const n of ['t2', 't3']) {
    await tabs[n].page.waitForFunction(() => !window.__steward.editor.getShape('shape:half-in'), null, { timeout: WAIT })
  }
})

test("a user's edit in tab 2 appears in tabs 1 and 3", async () => {
  await tabs.t2.page.evaluate(() => {
    window.__steward.editor.createShape({ id: 'shape:user-box', type: 'geo', x: 40, y: 500, props: { w: 160, h: 90, geo: 'ellipse', color: 'orange' } })
  })
  for (const n of ['t1', 't3']) {
    await tabs[n].page.waitForFunction(() => !!window.__steward.editor.getShape('shape:user-box'), null, { timeout: WAIT })
  }
  const recs = await converge([tabs.t1, tabs.t2, tabs.t3], 'after a user edit')
  assert.ok(recs.some((r) => r.id === 'shape:user-box' && r.props.geo === 'ellipse'))
})

// Two tabs look at different parts of the canvas and select different shapes: each prompt's
// "this" and "here" are its own tab's.
test("each tab's prompt acts on its own view and selection", async () => {
  const { t1, t2, t3 } = tabs
  // One shape per relayed edit: a batch's z-order can differ between the tabs (see README).
  for (const [id, x, y] of [['shape:asker-left', -3000, -2000], ['shape:asker-right', 4000, 3000]]) {
    await t2.page.evaluate(
      ([sid, px, py]) => void window.__steward.editor.createShape({ id: sid, type: 'geo', x: px, y: py, props: { w: 200, h: 120, geo: 'rectangle', color: 'black' } }),
      [id, x, y],
    )
    for (const n of ['t1', 't3']) {
      await tabs[n].page.waitForFunction((sid) => !!window.__steward.editor.getShape(sid), id, { timeout: WAIT })
    }
  }
  // Each user centres their camera on one box and selects it; returns the page viewport.
  const look = (tab, id) =>
    tab.page.evaluate((sid) => {
      const e = window.__steward.editor
      const b = e.getShapePageBounds(sid)
      e.setCamera({ x: 0, y: 0, z: 1 }, { immediate: true })
      e.centerOnPoint({ x: b.midX, y: b.midY }, { immediate: true })
      e.select(sid)
      const v = e.getViewportPageBounds()
      return { x: v.x, y: v.y, w: v.w, h: v.h }
    }, id)
  const views = { t2: await look(t2, 'shape:asker-left'), t3: await look(t3, 'shape:asker-right') }
  const ids = Object.fromEntries(await Promise.all(['t2', 't3'].map(async (n) => [n, await tabs[n].page.evaluate(() => window.__steward.identity)])))
  const blue = await prompt(t2, 'make this blue')
  for (const n of ['t1', 't2', 't3']) await waitStatus(tabs[n], blue)
  const red = await prompt(t3, 'make this red')
  for (const n of ['t1', 't2', 't3']) await waitStatus(tabs[n], red)
  const recs = await converge([t1, t2, t3], 'after recolouring')
  const before = new Set(recs.map((r) => r.id))
  const colour = (id) => recs.find((r) => r.id === id)?.props.color
  assert.equal(colour('shape:asker-left'), 'blue', "tab 2's selection turned blue")
  assert.equal(colour('shape:asker-right'), 'red', "tab 3's selection turned red")
  // "Here" is tab 3's viewport, far from the host's.
  const here = await prompt(t3, 'add a sticky note here')
  for (const n of ['t1', 't2', 't3']) await waitStatus(tabs[n], here)
  const notes = (await converge([t1, t2, t3], 'after a note here')).filter((r) => r.type === 'note' && !before.has(r.id))
  assert.ok(notes.length > 0, 'the run added notes')
  const v = views.t3
  for (const n of notes) assert.ok(n.x >= v.x && n.x <= v.x + v.w && n.y >= v.y && n.y <= v.y + v.h, `note ${n.id} at ${n.x},${n.y} is outside tab 3's view ${JSON.stringify(v)}`)
  // The steward asked each asker's own tab, and the run saw that tab's camera and selection.
  const contexts = await (await fetch(stackInfo.contexts)).json()
  for (const [sid, tab, selected] of [[blue, 't2', 'asker-left'], [red, 't3', 'asker-right']]) {
    const ctx = contexts.find((c) => c.sessionId === sid)
    assert.ok(ctx, `no context recorded for ${sid}`)
    assert.equal(ctx.asker, ids[tab])
    assert.equal(ctx.source, ids[tab], 'the screenshot came from the asker\'s own tab')
    assert.ok(ctx.screenshotBytes > 0 && ctx.viewNote === null)
    assert.deepEqual(ctx.selection, [selected])
    assert.ok(Math.abs(ctx.viewport.x - views[tab].x) < 1 && Math.abs(ctx.viewport.y - views[tab].y) < 1, `viewport ${JSON.stringify(ctx.viewport)} vs ${JSON.stringify(views[tab])}`)
  }
  // Tabs whose users prompt keep their own view pre-rendered (the steward asks them).
  for (const tab of [t2, t3]) {
    await tab.page.waitForFunction(() => window.__steward.handle.screenshots.stats.prerenders > 0, null, { timeout: WAIT })
  }
  // Back to the default camera and no selection, for the tests that follow.
  for (const tab of [t2, t3]) {
    await tab.page.evaluate(() => {
      window.__steward.editor.selectNone()
      window.__steward.editor.setCamera({ x: 0, y: 0, z: 1 }, { immediate: true })
    })
  }
})

test('a prompt from tab 1 leaves all three canvases identical, using the host screenshot', async () => {
  const sid = await prompt(tabs.t1, 'draw a flow chart of our signup')
  for (const n of ['t1', 't2', 't3']) await waitStatus(tabs[n], sid)
  const recs = await converge([tabs.t1, tabs.t2, tabs.t3], 'after a run')
  assert.ok(recs.filter((r) => r.typeName === 'shape').length >= 4, 'the run drew shapes')
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), 'no shape left locked')
  const contexts = await (await fetch(stackInfo.contexts)).json()
  const hostIdentity = await tabs.t1.page.evaluate(() => window.__steward.identity)
  const shot = contexts.find((c) => c.source === hostIdentity && c.screenshotBytes > 0)
  assert.ok(shot, `no screenshot from the host reached the steward: ${JSON.stringify(contexts)}`)
  // Chromium encodes WebP: the stream says so and the bytes are WebP.
  assert.equal(shot.screenshotType, 'image/webp')
  assert.equal(shot.signature, 'image/webp')
  assert.ok(shot.shapes >= 1, 'the host sent its shapes') // gzip-compressed: a failed inflate would degrade the context
  assert.ok(shot.screenshotBytes <= 64000, `the screenshot keeps the default byte budget: ${shot.screenshotBytes}`)
  await tabs.t1.page.screenshot({ path: join(results, 'e2e-after-run.png') })
})

test("every tab's chat shows the prompt with who asked, then the run; a run out of view offers show", async () => {
  const { t2, t3 } = tabs
  const asker = await t2.page.evaluate(() => window.__steward.identity)
  const sid = await prompt(t2, 'draw a flow chart of our signup for the chat')
  for (const tab of [t2, t3]) await waitStatus(tab, sid)
  for (const tab of [t2, t3]) {
    const run = await tab.page.waitForFunction(
      (s) => {
        const el = document.querySelector(`[data-testid=run][data-session="${s}"]`)
        return el && el.dataset.state === 'done' && el.querySelector('[data-testid=run-message]') ? el.outerHTML : null
      },
      sid,
      { timeout: WAIT },
    )
    const seen = await tab.page.evaluate((s) => {
      const el = document.querySelector(`[data-testid=run][data-session="${s}"]`)
      return {
        order: [...el.children].map((c) => c.dataset.testid),
        asker: el.querySelector('[data-testid=run-prompt]')?.dataset.asker,
        text: el.querySelector('[data-testid=run-prompt]')?.textContent,
      }
    }, sid)
    assert.ok(run, 'the run is shown')
    assert.equal(seen.order[0], 'run-prompt', `the prompt comes first: ${seen.order}`)
    assert.equal(seen.order.at(-1), 'run-status', `the status comes last: ${seen.order}`)
    assert.equal(seen.asker, asker, "the asker is the prompting tab's identity")
    assert.match(seen.text, /draw a flow chart of our signup for the chat/)
  }
  // Tab 3 looks elsewhere: the run offers "show", which brings its drawing into view.
  await t3.page.evaluate(() => void window.__steward.editor.setCamera({ x: 60000, y: 60000, z: 1 }, { immediate: true }))
  const show = t3.page.locator(`[data-testid=run][data-session="${sid}"] [data-testid=run-show]`)
  await show.waitFor({ timeout: WAIT })
  await show.click()
  await t3.page.waitForFunction(
    (s) => {
      const h = window.__steward.handle
      const b = h.runBounds(s)
      const v = window.__steward.editor.getViewportPageBounds()
      return b && b.x >= v.x && b.y >= v.y && b.x + b.w <= v.x + v.w && b.y + b.h <= v.y + v.h
    },
    sid,
    { timeout: WAIT },
  )
  await t3.page.locator(`[data-testid=run][data-session="${sid}"] [data-testid=run-show]`).waitFor({ state: 'detached', timeout: WAIT })
  await t3.page.screenshot({ path: join(results, 'e2e-chat-runs.png') })
  await t3.page.evaluate(() => void window.__steward.editor.setCamera({ x: 0, y: 0, z: 1 }, { immediate: true }))
})

test('a spoken request: tab 1 holds the microphone, every tab shows the caption and ends with the drawing', async () => {
  const { t1, t2, t3 } = tabs
  const all = [t1, t2, t3]
  const known = await t1.page.evaluate(() => Object.keys(window.__steward.handle.state.sessions))
  const shapesBefore = (await converge(all, 'before speaking')).filter((r) => r.typeName === 'shape').length
  const speaker = await t1.page.evaluate(() => window.__steward.identity)
  const box = await t1.page.getByTestId('mic').boundingBox()
  await t1.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
  await t1.page.mouse.down() // push to talk: held until the caption is final
  await t1.page.waitForFunction(() => window.__steward.voice.state.micOn, null, { timeout: WAIT })
  await t2.page.waitForFunction((who) => document.querySelector('[data-testid=speaking]').dataset.speaking.split(',').includes(who), speaker, { timeout: WAIT })
  for (const tab of all) {
    await tab.page.waitForFunction(
      (who) => [...document.querySelectorAll('[data-testid=captions] li[data-final=yes]')].some((li) => li.dataset.speaker === who && /flow chart/.test(li.textContent)),
      speaker,
      { timeout: WAIT },
    )
  }
  await t1.page.mouse.up()
  await t1.page.waitForFunction(() => !window.__steward.voice.state.micOn, null, { timeout: WAIT })
  const started = await t1.page.waitForFunction((k) => Object.keys(window.__steward.handle.state.sessions).find((s) => !k.includes(s)), known, { timeout: WAIT })
  const sid = await started.jsonValue()
  for (const tab of all) await waitStatus(tab, sid)
  const recs = await converge(all, 'after a spoken request')
  assert.ok(recs.filter((r) => r.typeName === 'shape').length >= shapesBefore + 4, 'the spoken request drew a flow chart')
  await t2.page.screenshot({ path: join(results, 'e2e-voice.png') })
})

test('a tab reloaded mid-run catches up without duplicates', async () => {
  const before = await appliedCount(tabs.t3)
  const sid = await prompt(tabs.t2, 'draw a flow chart of our signup again')
  await waitApplied(tabs.t3, before)
  await tabs.t3.page.reload()
  await waitReady(tabs.t3)
  const doneBefore = await tabs.t3.page.evaluate((s) => {
    const raw = sessionStorage.getItem(`steward:${new URLSearchParams(location.search).get('room')}`)
    return raw ? JSON.parse(raw).sessions[s]?.done ?? [] : []
  }, sid)
  for (const n of ['t1', 't2']) await waitStatus(tabs[n], sid)
  await converge([tabs.t1, tabs.t2, tabs.t3], 'after a reload mid-run')
  // Nothing the tab had finished before the reload was applied again after it.
  const again = await tabs.t3.page.evaluate((done) => window.__steward.handle.executor.appliedLog.filter((id) => done.includes(id)), doneBefore)
  assert.ok(doneBefore.length > 0, 'the tab had applied part of the run before the reload')
  assert.deepEqual(again, [], 'actions applied twice')
})

test('the host tab closes mid-run and the run completes', async () => {
  const before = await appliedCount(tabs.t2)
  const sid = await prompt(tabs.t2, 'and one more flow chart please')
  await waitApplied(tabs.t2, before)
  // Like a person closing the tab: the page unloads (livekit-client leaves on pagehide).
  const oldHost = await tabs.t1.page.evaluate(() => window.__steward.identity)
  await tabs.t1.page.close({ runBeforeUnload: true })
  await tabs.t1.context.close()
  for (const n of ['t2', 't3']) await waitStatus(tabs[n], sid)
  await converge([tabs.t2, tabs.t3], 'after the host left')
  // Every record of both tabs is the durable outbox's: nothing lost, doubled or left as a
  // preview across the change of host.
  await matchesOutbox(stackInfo.agrees, [tabs.t2, tabs.t3], 'after the host left', WAIT)
  // A remaining tab took over as host, and both tabs agree which one.
  for (const n of ['t2', 't3']) {
    await tabs[n].page.waitForFunction((h) => window.__steward.handle.state.host !== h, oldHost, { timeout: WAIT })
  }
  const views = await Promise.all(['t2', 't3'].map((n) => tabs[n].page.evaluate(() => [window.__steward.handle.state.host, window.__steward.identity])))
  assert.equal(views[0][0], views[1][0], 'tabs disagree about the host')
  assert.ok([views[0][1], views[1][1]].includes(views[0][0]), `host ${views[0][0]} is not a remaining tab`)
  await tabs.t2.page.screenshot({ path: join(results, 'e2e-canvas.png') })
})

test('a fairy project: two drones draw inside their bounds and every tab ends identical', async () => {
  const shapesBefore = (await converge([tabs.t2, tabs.t3], 'before the project')).filter((r) => r.typeName === 'shape').length
  const sid = await prompt(tabs.t2, 'project: draw a farm')
  for (const n of ['t2', 't3']) await waitStatus(tabs[n], sid)
  const recs = await converge([tabs.t2, tabs.t3], 'after a fairy project')
  assert.ok(recs.filter((r) => r.typeName === 'shape').length > shapesBefore, 'the project drew shapes')
  // Fairy presence reached the browsers: an orchestrator and at least two drones.
  const fairies = await tabs.t3.page.evaluate(() => window.__steward.handle.state.fairies)
  assert.ok(fairies.length >= 3, `fairies: ${JSON.stringify(fairies)}`)
  // Show the whole canvas in the artifact (this tab's camera only; not a document change).
  await tabs.t2.page.evaluate(() => {
    window.__steward.editor.zoomToFit({ animation: { duration: 0 } })
  })
  await tabs.t2.page.waitForTimeout(300)
  await tabs.t2.page.screenshot({ path: join(results, 'e2e-fairy-project.png') })
})

test("the demo's suggested prompt in a fresh room ends with the whole drawing in the asker's view", async () => {
  // A new user: their own room, one tab, the prompt the chat box suggests, the default model.
  const tab = await openTab('fresh', `${ROOM}-fresh`)
  const suggested = await tab.page.evaluate(() => document.querySelector('textarea[placeholder], input[placeholder]')?.getAttribute('placeholder') ?? '')
  const ask = /e\.g\. ([^)]+)\)/.exec(suggested)?.[1]
  assert.equal(ask, 'draw a flow chart of our signup')
  const sid = await prompt(tab, ask)
  await waitStatus(tab, sid)
  const seen = await tab.page.evaluate(() => {
    const editor = window.__steward.editor
    const view = editor.getViewportPageBounds()
    const shapes = editor.getCurrentPageShapes()
    const outside = shapes
      .map((s) => ({ id: s.id, b: editor.getShapePageBounds(s) }))
      .filter(({ b }) => b && !(b.minX >= view.minX - 1 && b.minY >= view.minY - 1 && b.maxX <= view.maxX + 1 && b.maxY <= view.maxY + 1))
      .map(({ id }) => id)
    return { shapes: shapes.length, outside, locked: shapes.filter((s) => s.isLocked).length }
  })
  assert.ok(seen.shapes >= 9, `the flow chart was drawn: ${seen.shapes} shapes`)
  assert.deepEqual(seen.outside, [], 'every shape is inside the asker\'s view')
  assert.equal(seen.locked, 0)
  await tab.page.screenshot({ path: join(results, 'e2e-first-run.png') })
})

// Undo for everyone, in a room of its own: three tabs, the run's entry's undo and redo.
test('undo and redo from the chat panel: identical in three tabs, a moved shape stays, others refused', async () => {
  const room = `${ROOM}-undo`
  const [u1, u2, u3] = [await openTab('u1', room), await openTab('u2', room), await openTab('u3', room)]
  const all = [u1, u2, u3]
  const strip = (recs) => JSON.stringify(recs.map(({ index, ...r }) => r)) // z-order: fractional indexes are per-tab
  await u2.page.evaluate(() => {
    window.__steward.editor.createShape({ id: 'shape:undo-user', type: 'geo', x: -600, y: -400, props: { w: 160, h: 90, geo: 'ellipse' } })
  })
  for (const t of all) await t.page.waitForFunction(() => !!window.__steward.editor.getShape('shape:undo-user'), null, { timeout: WAIT })
  const before = await converge(all, 'before the run')
  const entry = (tab, sid) => tab.page.locator(`[data-testid=run][data-session="${sid}"]`)
  const undoOf = async (tab, sid) => {
    const run = await tab.page.waitForFunction((s) => window.__steward.handle.state.prompts.find((p) => p.reverts === s)?.sessionId, sid, { timeout: WAIT })
    return run.jsonValue()
  }

  // A run, then a user moves one of its shapes.
  const sid = await prompt(u1, 'draw a flow chart of our signup')
  for (const t of all) await waitStatus(t, sid)
  await converge(all, 'after the run')
  const moved = await u1.page.evaluate((s) => {
    const { editor, handle } = window.__steward
    const id = (handle.state.drawn[s] ?? []).find((i) => editor.getShape(`shape:${i.replace(/^shape:/, '')}`)?.type === 'geo')
    return id?.replace(/^shape:/, '')
  }, sid)
  assert.ok(moved, 'the run drew a box')
  await u2.page.evaluate((id) => {
    const shape = window.__steward.editor.getShape(`shape:${id}`)
    window.__steward.editor.updateShape({ id: shape.id, type: shape.type, x: shape.x + 900, y: shape.y + 900 })
  }, moved)
  const movedX = await u2.page.evaluate((id) => window.__steward.editor.getShape(`shape:${id}`).x, moved)
  for (const t of all) await t.page.waitForFunction(([id, x]) => window.__steward.editor.getShape(`shape:${id}`)?.x === x, [moved, movedX], { timeout: WAIT })
  const afterMove = await converge(all, 'after the user moved a shape')

  // Tab 2 did not ask for the run: its undo is refused, and nothing changes.
  await entry(u2, sid).getByTestId('run-undo').click()
  const refusal = await u2.page.getByTestId('run-undo-error').first().textContent({ timeout: WAIT })
  assert.match(refusal, /moderator/)
  assert.equal(strip(await converge(all, 'after a refused undo')), strip(afterMove))

  // Tab 1 asked for it: undo takes it back in every tab; the moved shape stays and is named.
  await entry(u1, sid).getByTestId('run-undo').click()
  const undo = await undoOf(u3, sid)
  for (const t of all) await waitStatus(t, undo)
  const undone = await converge(all, 'after undo')
  const userShape = undone.find((r) => r.id === `shape:${moved}`)
  assert.ok(userShape && userShape.x === movedX, 'the moved shape stays where the user put it')
  const said = await u3.page.evaluate((s) => window.__steward.handle.state.chat.filter((m) => m.sessionId === s).map((m) => m.text).join(' '), undo)
  assert.ok(said.includes(moved), `the reply names the moved shape: ${said}`)
  // What the reply names (the moved box; an arrow tldraw re-routed with it) stays; the rest goes.
  const named = (r) => said.includes(r.id.replace(/^shape:/, ''))
  const beforeIds = new Set(before.map((r) => r.id))
  assert.deepEqual(undone.filter((r) => r.typeName === 'shape' && !beforeIds.has(r.id) && !named(r)).map((r) => r.id), [], 'the rest of the run is gone')
  const shapesOnly = (recs) => recs.filter((r) => r.typeName === 'shape' && beforeIds.has(r.id))
  assert.equal(strip(shapesOnly(undone)), strip(shapesOnly(before)), 'the shapes there before the run are as they were')

  // Redo: the undo's own entry offers it; the run is back as it was, the moved shape untouched.
  const redoButton = entry(u1, undo).getByTestId('run-undo')
  assert.equal(await redoButton.textContent(), 'redo')
  await redoButton.click()
  const redo = await undoOf(u2, undo)
  for (const t of all) await waitStatus(t, redo)
  assert.equal(strip(await converge(all, 'after redo')), strip(afterMove))

  // Undo of a run still going: it is cancelled first, then taken back.
  const baseline = await converge(all, 'before a running run')
  const startedAt = await appliedCount(u1)
  const running = await prompt(u1, 'draw a flow chart of our signup again')
  await waitApplied(u1, startedAt + 2)
  await u1.page.evaluate((s) => window.__steward.handle.revert(s), running)
  for (const t of all) await waitStatus(t, running, 'canceled')
  const undoRunning = await undoOf(u1, running)
  for (const t of all) await waitStatus(t, undoRunning)
  assert.equal(strip(await converge(all, 'after undo of a running run')), strip(baseline))
  await u1.page.screenshot({ path: join(results, 'e2e-undo.png') })
  for (const t of all) {
    await t.context.close()
    delete tabs[t.name]
  }
})

test('the steward is SIGKILLed mid-run and restarted: every tab ends the run interrupted, previews withdrawn, identical', async () => {
  const before = await appliedCount(tabs.t3)
  const sid = await prompt(tabs.t2, 'draw a flow chart of our signup, one last time')
  await waitApplied(tabs.t3, before)
  const res = await fetch(stackInfo.crash, { method: 'POST' })
  assert.equal(res.status, 200, await res.text())
  // The new steward finds the run left running: status error (with its last seq) in every tab.
  for (const n of ['t2', 't3']) await waitStatus(tabs[n], sid, 'error')
  const detail = await tabs.t3.page.evaluate((s) => window.__steward.handle.state.sessions[s], sid)
  assert.match(detail.detail ?? '', /interrupted/)
  assert.equal(typeof detail.lastSeq, 'number')
  const recs = await converge([tabs.t2, tabs.t3], 'after the steward restarted')
  // Half-drawn previews were withdrawn: nothing stays locked mid-stream.
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), 'a preview was left behind')
  // The restarted steward serves the room: a new prompt runs to the end everywhere.
  const next = await prompt(tabs.t3, 'draw a red circle')
  for (const n of ['t2', 't3']) await waitStatus(tabs[n], next)
  await converge([tabs.t2, tabs.t3], 'after a run on the restarted steward')
  await matchesOutbox(stackInfo.agrees, [tabs.t2, tabs.t3], 'after a run on the restarted steward', WAIT)
})
