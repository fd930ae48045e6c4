// End-to-end: the room's one conversation and the words that are commands, in real Chromium
// tabs on the demo page against a real livekit-server, Postgres and the steward (scripted
// model). Two users prompt; a reloaded tab and a tab that joins late show the same chat in the
// same order as the tabs that saw it live; "undo" typed into the panel takes back the asker's
// last run in every tab, without a request to the model. Screenshots of the panel at each step
// go to test-results/. Must run inside the network namespace (ops/netns-run.sh).
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { bridge, openTab, startStack, stopStack, WAIT } from './rig.mjs'
import { snapshot } from './snapshot.mjs'

const ROOM = `conv-${Date.now().toString(36)}`
const results = join(bridge, 'test-results')
let stack
const tabs = []

before(async () => {
  mkdirSync(results, { recursive: true })
  stack = await startStack(ROOM)
})

after(async () => {
  for (const t of tabs) await t.close()
  await stopStack(stack?.child)
})

async function open(name) {
  const tab = await openTab(stack.info, name, ROOM)
  tabs.push(tab)
  return tab
}

/** The panel's chat as text lines, the same whichever tab reads it ("you (x)" is "x"). */
async function chatLines(tab) {
  return tab.page.evaluate(() =>
    [...document.querySelectorAll('[data-testid=chat] [data-testid=run]')].map((run) =>
      [...run.querySelectorAll('[data-testid=run-prompt], [data-testid=run-message], [data-testid=run-thoughts] summary')]
        .map((el) => `${el.dataset.testid ?? 'thoughts'}: ${el.textContent.replace(/^you \((.*?)\)/, '$1').trim()}`)
        .join('\n'),
    ),
  )
}

/** The panel's chat once it has settled: every run it shows has ended in this tab and no
 * message is still streaming. A run done in the asker's tab may still be arriving in another
 * (its last message a partial "I added"), and that is no state to expect of a reload. */
async function settledLines(tab) {
  await tab.page.waitForFunction(
    () => {
      const s = window.__steward.handle.state
      const ended = s.prompts.every((p) => ['done', 'canceled', 'error'].includes(s.sessions[p.sessionId]?.status))
      return ended && !document.querySelector('[data-testid=run-message][data-partial=yes]')
    },
    null,
    { timeout: WAIT },
  )
  return chatLines(tab)
}

/** Waits until `tab` shows `expected` (the lines another tab shows); returns what it shows. */
async function showsSame(tab, expected) {
  const deadline = Date.now() + WAIT
  let seen = []
  while (Date.now() < deadline) {
    seen = await chatLines(tab)
    if (JSON.stringify(seen) === JSON.stringify(expected)) return seen
    await new Promise((r) => setTimeout(r, 200))
  }
  assert.deepEqual(seen, expected, `${tab.name} shows the same chat`)
  return seen
}

async function typePrompt(tab, text) {
  await tab.page.fill('[data-testid="prompt"]', text)
  await tab.page.click('[data-testid="send"]')
}

/** The run whose prompt is `text` and asked by `tab`, once it is done there. */
async function doneRun(tab, text) {
  const handle = await tab.page.waitForFunction(
    ([t, me]) => {
      const s = window.__steward.handle.state
      const p = s.prompts.find((x) => x.text === t && x.asker === me)
      return p && s.sessions[p.sessionId]?.status === 'done' ? p.sessionId : null
    },
    [text, await tab.page.evaluate(() => window.__steward.identity)],
    { timeout: WAIT },
  )
  return handle.jsonValue()
}

async function modelRequests() {
  const res = await fetch(stack.info.modelRequests)
  return (await res.json()).requests
}

async function identical(list) {
  const deadline = Date.now() + WAIT
  let snaps = []
  while (Date.now() < deadline) {
    snaps = await Promise.all(list.map(snapshot))
    if (snaps.every((s) => s === snaps[0])) return JSON.parse(snaps[0]).filter((r) => r.typeName === 'shape')
    await new Promise((r) => setTimeout(r, 250))
  }
  assert.fail('the canvases never became identical')
}

const shot = (tab, name) => tab.page.screenshot({ path: join(results, `conversation-${name}.png`) })

test('reload and a late tab show the same chat in the same order; typed "undo" reverts without a model request', async () => {
  const ann = await open('ann')
  const bob = await open('bob')

  // Two users prompt, one after the other: two cards, each with its thoughts and messages.
  await typePrompt(ann, 'draw a flow chart of our signup')
  const annRun = await doneRun(ann, 'draw a flow chart of our signup')
  await typePrompt(bob, 'add a sticky note that says ship it')
  await doneRun(bob, 'add a sticky note that says ship it')
  const live = await settledLines(ann)
  assert.equal(live.length, 2, `two cards: ${JSON.stringify(live)}`)
  assert.match(live[0], /^run-prompt: ann|^run-prompt: user-/)
  assert.match(live[0], /draw a flow chart of our signup/)
  assert.match(live[1], /add a sticky note that says ship it/)
  assert.match(live[0], /thoughts: .*thought/, 'a run\'s thoughts are one row')
  assert.equal((live[0].match(/^thoughts:/gm) ?? []).length, 1, 'one thoughts row per run')
  await showsSame(bob, live)
  await shot(ann, '1-live-ann')
  await shot(bob, '1-live-bob')
  const before = await identical([ann, bob])

  // Bob reloads: the conversation comes back from the steward, in the same order.
  await bob.page.reload()
  await bob.page.waitForFunction(() => window.__steward?.handle.state.stewardPresent, null, { timeout: WAIT })
  await showsSame(bob, live)
  await shot(bob, '2-reloaded-bob')

  // A tab that joins late sees the same.
  const cat = await open('cat')
  await showsSame(cat, live)
  await shot(cat, '3-late-cat')
  // Items are numbered by the steward: every tab holds the same numbers for the same items.
  const numbers = (tab) => tab.page.evaluate(() => window.__steward.handle.state.chat.filter((m) => !m.partial).map((m) => `${m.n}:${m.id}`))
  assert.deepEqual(await numbers(cat), await numbers(ann))
  assert.deepEqual(await numbers(bob), await numbers(ann))

  // Ann types "undo": her flow chart goes in every tab, bob's note stays, the model is not asked.
  const requests = await modelRequests()
  assert.ok(requests >= 2, `the two prompts reached the model: ${requests}`)
  const drawnByAnn = await ann.page.evaluate((s) => window.__steward.handle.state.drawn[s] ?? [], annRun)
  assert.ok(drawnByAnn.length >= 3, `ann's run drew shapes: ${drawnByAnn.length}`)
  await typePrompt(ann, 'undo')
  const undo = await ann.page.waitForFunction(
    (s) => {
      const st = window.__steward.handle.state
      const p = st.prompts.find((x) => x.reverts === s)
      return p && st.sessions[p.sessionId]?.status === 'done' ? p.sessionId : null
    },
    annRun,
    { timeout: WAIT },
  )
  const undoRun = await undo.jsonValue()
  const after = await identical([ann, bob, cat])
  const left = new Set(after.map((s) => s.id))
  assert.ok(drawnByAnn.every((id) => !left.has(id)), "ann's shapes are gone in every tab")
  assert.equal(after.length, before.length - drawnByAnn.length, "bob's note stays")
  assert.equal(await modelRequests(), requests, 'the word "undo" reached no model')
  // The reply says what was taken back, under the undo's own card, in every tab.
  const said = await ann.page.evaluate((s) => window.__steward.handle.state.chat.filter((m) => m.sessionId === s).map((m) => m.text), undoRun)
  assert.equal(said.length, 1)
  assert.match(said[0], /^Took back "draw a flow chart of our signup": \d+ shape changes\.$/)
  const withUndo = await settledLines(ann)
  assert.equal(withUndo.length, 3)
  assert.match(withUndo[2], /^run-prompt: .*undo\nrun-message: Took back "draw a flow chart of our signup"/)
  await showsSame(bob, withUndo)
  await showsSame(cat, withUndo)
  await shot(ann, '4-undo-ann')

  // And once more after a reload, with the undo in it.
  await cat.page.reload()
  await cat.page.waitForFunction(() => window.__steward?.handle.state.stewardPresent, null, { timeout: WAIT })
  await showsSame(cat, withUndo)
  await shot(cat, '5-reloaded-cat')
})

test('typed "undo" after a project takes the whole project back, with no model request', async () => {
  const [ann, bob] = tabs
  const before = await identical([ann, bob])
  await typePrompt(ann, 'project: draw a farm')
  await doneRun(ann, 'project: draw a farm')
  const during = await identical([ann, bob])
  assert.ok(during.length > before.length, 'the project drew')
  // The project's card sits under its prompt, its fairies' runs in the same card.
  const card = await ann.page.evaluate(() => {
    const runs = [...document.querySelectorAll('[data-testid=chat] [data-testid=run]')]
    const run = runs.find((r) => r.querySelector('[data-testid=run-prompt]')?.textContent.includes('project: draw a farm'))
    const kids = [...(run?.children ?? [])].map((el) => el.dataset.testid ?? el.className)
    return { kids, sessions: run?.dataset.sessions.split(' ').length ?? 0 }
  })
  assert.equal(card.kids[0], 'run-prompt')
  assert.match(String(card.kids[1]), /project/, `the project's card is right under the prompt: ${card.kids}`)
  assert.ok(card.sessions >= 3, `the project's fairies' runs are in its prompt's card: ${card.sessions}`)
  await shot(ann, '6-project-ann')
  const requests = await modelRequests()
  await typePrompt(ann, 'undo')
  await ann.page.waitForFunction(
    () => {
      const s = window.__steward.handle.state
      const undo = s.prompts.filter((p) => p.reverts && p.text === 'undo').at(-1)
      const done = undo && s.sessions[undo.sessionId]?.status === 'done'
      return done && s.chat.some((m) => m.sessionId === undo.sessionId && /^Took back the project "project: draw a farm": \d+ shape changes\.$/.test(m.text))
    },
    null,
    { timeout: WAIT },
  )
  const after = await identical([ann, bob])
  assert.deepEqual(after.map((s) => s.id).sort(), before.map((s) => s.id).sort(), 'every tab is back to before the project')
  assert.equal(await modelRequests(), requests, 'the word "undo" reached no model')
  await shot(ann, '7-project-undone-ann')
})
