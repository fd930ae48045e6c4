// End-to-end: directing a group of fairies from two real Chromium tabs on the demo page, a
// real livekit-server, Postgres and the steward (scripted model). A prompt that picks one
// fairy is worked solo, two as a duo (the first leads and draws too), three as a project the
// first one leads; each run ends `done` in both tabs and both canvases are identical. The
// tabs' screenshots at each step are in test-results/ (e2e-directing-*.png).
// Must run inside the network namespace (ops/netns-run.sh): libwebrtc ignores loopback.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { WAIT, bridge, openTab, startStack, stopStack } from './rig.mjs'
import { snapshot } from './snapshot.mjs'

const ROOM = `dir-${Date.now().toString(36)}`
const RUN_WAIT = 90_000 // a project's run ends when its last drone is done
const results = join(bridge, 'test-results')
let stack
const tabs = []

async function converge(label) {
  const deadline = Date.now() + WAIT
  let snaps = []
  while (Date.now() < deadline) {
    snaps = await Promise.all(tabs.map(snapshot))
    if (snaps.every((s) => s === snaps[0])) return JSON.parse(snaps[0])
    await new Promise((r) => setTimeout(r, 250))
  }
  assert.fail(`${label}: canvases differ between the tabs`)
}

// The fairies that ran sessions of their own in this tab's view (a fairy the lead directs
// streams in its own session; the picked lead streams in the prompt's).
const fairySessions = (tab) =>
  tab.page.evaluate(() =>
    Object.values(window.__steward.handle.state.sessions)
      .filter((s) => s.fairy)
      .map((s) => `${s.sessionId}:${s.fairy}`),
  )

// This tab's camera shows the whole canvas (a camera move, not a document change).
async function fit(tab) {
  await tab.page.evaluate(() => {
    window.__steward.editor.zoomToFit({ animation: { duration: 0 } })
  })
  await tab.page.waitForTimeout(300)
}

async function direct(from, message, fairies, label) {
  const before = new Set(await fairySessions(tabs[0]))
  const shapesBefore = (await converge(`${label}: before`)).filter((r) => r.typeName === 'shape').length
  const reply = await from.page.evaluate(([m, f]) => window.__steward.handle.prompt(m, { fairies: f }), [message, fairies])
  assert.ok(reply.sessionId, `prompt refused: ${reply.error}`)
  // Mid-run: a picked fairy drawing in its task area, as the asker's tab shows it (the
  // overlay's labels read "name · mode"; the camera fits the whole canvas).
  const working = await from.page
    .waitForFunction(() => [...document.querySelectorAll('.steward-fairy')].some((e) => / · working-/.test(e.title)), null, { timeout: WAIT })
    .then(() => true)
    .catch(() => false)
  assert.ok(working, `${label}: no tab showed a picked fairy at work`)
  await fit(from)
  await from.page.screenshot({ path: join(results, `e2e-directing-${label}-working.png`) })
  for (const tab of tabs) {
    await tab.page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'done', reply.sessionId, { timeout: RUN_WAIT })
  }
  const recs = await converge(`${label}: after`)
  assert.ok(recs.filter((r) => r.typeName === 'shape').length > shapesBefore, `${label}: the run drew shapes`)
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), `${label}: no shape left locked`)
  // Everyone idle again, as every tab shows.
  for (const tab of tabs) {
    await tab.page.waitForFunction(() => window.__steward.handle.state.fairies.every((f) => f.mode === 'idling'), null, { timeout: WAIT })
  }
  for (const tab of tabs) {
    await fit(tab)
    await tab.page.screenshot({ path: join(results, `e2e-directing-${label}-${tab.name}.png`) })
  }
  const added = (await fairySessions(tabs[0])).filter((s) => !before.has(s)).map((s) => s.split(':')[1])
  return new Set(added)
}

before(async () => {
  mkdirSync(results, { recursive: true })
  stack = await startStack(ROOM)
  tabs.push(await openTab(stack.info, 't1', ROOM))
  tabs.push(await openTab(stack.info, 't2', ROOM))
})

after(async () => {
  for (const tab of tabs) await tab.close()
  await stopStack(stack?.child)
})

test('one picked fairy works the prompt solo, in the prompt’s own session', async () => {
  const others = await direct(tabs[0], 'draw a beach', ['fairy-2'], 'solo')
  assert.deepEqual([...others], [], 'no other fairy worked')
})

test('two picked fairies work it as a duo: the first leads and draws, the second draws', async () => {
  const others = await direct(tabs[1], 'draw a garden', ['fairy-3', 'fairy-1'], 'duo')
  assert.deepEqual([...others], ['fairy-1'], 'only the partner streamed in a session of its own')
})

test('three picked fairies work it as a project the first one leads', async () => {
  const others = await direct(tabs[0], 'draw a street', ['fairy-2', 'fairy-1', 'fairy-3'], 'project')
  assert.deepEqual([...others].sort(), ['fairy-1', 'fairy-3'], 'both drones drew in sessions of their own')
})

test('a pick of a fairy the room does not have is refused with the reason', async () => {
  const reply = await tabs[1].page.evaluate(() => window.__steward.handle.prompt('draw a cat', { fairies: ['fairy-9'] }))
  assert.ok(reply.sessionId, `the prompt starts a run: ${reply.error}`)
  await tabs[1].page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'error', reply.sessionId, { timeout: WAIT })
  const said = await tabs[1].page.evaluate(
    (s) => window.__steward.handle.state.chat.filter((c) => c.sessionId === s).map((c) => c.text),
    reply.sessionId,
  )
  assert.ok(said.some((t) => t.includes("no fairy 'fairy-9'")), `chat: ${JSON.stringify(said)}`)
})
