// End-to-end: directing a group of fairies from two real Chromium tabs on the demo page, a
// real livekit-server, Postgres and the steward (scripted model). The user picks fairies by
// clicking them in the panel's crew list (the panel numbers them and says who will work the
// prompt and how) and sends: one fairy works it solo, two as a duo (the first leads and draws
// too), three as a project the first one leads; each run ends `done` in both tabs and both
// canvases are identical. A pick of a busy fairy is refused with the steward's reason under
// the prompt box. The tabs' screenshots at each step are in test-results/ (e2e-directing-*.png).
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

const names = (tab, ids) =>
  tab.page.evaluate((f) => f.map((id) => window.__steward.handle.state.fairies.find((x) => x.id === id).name), ids)

/** Picks `fairies` in the panel of `tab` by clicking them in the crew list, in that order
 * (clearing earlier picks first); returns what the panel says above Send. */
async function pick(tab, fairies, label) {
  const page = tab.page
  if (await page.locator('[data-testid=picks-clear]').count()) await page.click('[data-testid=picks-clear]')
  for (const id of fairies) await page.click(`[data-testid=crew-fairy][data-fairy=${id}] [data-testid=crew-pick]`)
  const shown = await page.locator('[data-testid=crew-pick]').evaluateAll((els) =>
    els.filter((e) => e.getAttribute('aria-pressed') === 'true').map((e) => [e.closest('[data-fairy]').dataset.fairy, e.dataset.order]),
  )
  assert.deepEqual(
    shown.sort((a, b) => a[1] - b[1]),
    fairies.map((id, i) => [id, String(i + 1)]),
    `${label}: the panel numbers the picks in the order clicked`,
  )
  await page.screenshot({ path: join(results, `e2e-directing-${label}-picked.png`) })
  return page.textContent('[data-testid=picks-sentence]')
}

/** Types `message` into the panel of `tab` and clicks Send; the run it started. */
async function send(tab, message) {
  await tab.page.fill('[data-testid=prompt]', message)
  await tab.page.click('[data-testid=send]')
  const me = await tab.page.evaluate(() => window.__steward.identity)
  const sid = await tab.page.waitForFunction(
    ([t, who]) => window.__steward.handle.state.prompts.find((p) => p.text === t && p.asker === who)?.sessionId,
    [message, me],
    { timeout: WAIT },
  )
  return sid.jsonValue()
}

/** `from` picks `fairies` in its panel (checking the sentence above Send says `sentence` of
 * their names), sends `message` and waits for the run to end done everywhere; `during` runs
 * while it works. Returns the fairies that ran sessions of their own. */
async function direct(from, message, fairies, label, sentence, during = async () => {}) {
  const before = new Set(await fairySessions(tabs[0]))
  const shapesBefore = (await converge(`${label}: before`)).filter((r) => r.typeName === 'shape').length
  assert.equal(await pick(from, fairies, label), sentence(await names(from, fairies)))
  const sessionId = await send(from, message)
  // Mid-run: a picked fairy drawing in its task area, as the asker's tab shows it (the
  // overlay's labels read "name · mode"; the camera fits the whole canvas).
  const working = await from.page
    .waitForFunction(() => [...document.querySelectorAll('.steward-fairy')].some((e) => / · working-/.test(e.title)), null, { timeout: WAIT })
    .then(() => true)
    .catch(() => false)
  assert.ok(working, `${label}: no tab showed a picked fairy at work`)
  await fit(from)
  await from.page.screenshot({ path: join(results, `e2e-directing-${label}-working.png`) })
  await during(sessionId)
  for (const tab of tabs) {
    await tab.page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'done', sessionId, { timeout: RUN_WAIT })
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

test('one fairy picked in the panel works the prompt solo, in the prompt’s own session', async () => {
  const others = await direct(tabs[0], 'draw a beach', ['fairy-2'], 'solo', ([a]) => `${a} works it solo.`)
  assert.deepEqual([...others], [], 'no other fairy worked')
})

test('two fairies picked in the panel work it as a duo: the first leads and draws, the second draws', async () => {
  const others = await direct(tabs[1], 'draw a garden', ['fairy-3', 'fairy-1'], 'duo', ([a, b]) => `${a} leads, ${b} draws with it.`)
  assert.deepEqual([...others], ['fairy-1'], 'only the partner streamed in a session of its own')
})

test('three fairies picked in the panel work it as a project the first one leads', async () => {
  const sentence = ([a, b, c]) => `${a} leads a project with ${b} and ${c}.`
  // Its card under the prompt ticks a task off while the other is still worked on.
  const ticking = async (sessionId) => {
    const page = tabs[0].page
    const card = `[data-testid=run][data-session="${sessionId}"] [data-testid=project-card]`
    await page.waitForSelector(`${card} [data-testid=project-task][data-status=done]`, { timeout: RUN_WAIT })
    await page.screenshot({ path: join(results, 'e2e-directing-project-ticking.png') })
  }
  const others = await direct(tabs[0], 'draw a street', ['fairy-2', 'fairy-1', 'fairy-3'], 'project', sentence, ticking)
  assert.deepEqual([...others].sort(), ['fairy-1', 'fairy-3'], 'both drones drew in sessions of their own')
})

test('a pick of a busy fairy is refused and the panel shows the steward’s reason', async () => {
  const [t1, t2] = tabs
  await pick(t1, ['fairy-2', 'fairy-1', 'fairy-3'], 'busy-project')
  const project = await send(t1, 'draw a harbour')
  // While the project works, the other tab picks one of its fairies.
  await t2.page.waitForFunction(() => window.__steward.handle.state.fairies.some((f) => f.id === 'fairy-1' && f.mode !== 'idling'), null, { timeout: WAIT })
  await pick(t2, ['fairy-1'], 'busy')
  await t2.page.waitForSelector('[data-testid=picks-busy]', { timeout: WAIT })
  const refusedRun = await send(t2, 'draw a boat')
  const [name] = await names(t2, ['fairy-1'])
  await t2.page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'error', refusedRun, { timeout: WAIT })
  const shown = await t2.page.textContent('[data-testid=prompt-error]', { timeout: WAIT })
  assert.match(shown, new RegExp(`${name} is busy`), `the reason under the prompt box: ${shown}`)
  await t2.page.screenshot({ path: join(results, 'e2e-directing-busy-refused-t2.png') })
  for (const tab of tabs) {
    await tab.page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'done', project, { timeout: RUN_WAIT })
  }
  await converge('busy: after the project')
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
