// End-to-end: the room's crew and its projects, directed from the panel of real Chromium tabs
// (the demo page), with a real livekit-server, Postgres and the steward's scripted model.
// Summon a fourth fairy and rename it; a project whose card shows every task's owner and
// status as they change, in every tab and in a tab that joins late; abort mid-project (only
// the asker or a moderator) leaves no half-drawn previews and the same canvas everywhere;
// undo a project as one revert; a fairy picked in one tab and dismissed from another drops out
// of the picks. Must run inside the network namespace (ops/netns-run.sh).
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { WAIT, bridge, openTab, startStack, stopStack } from './rig.mjs'
import { snapshot } from './snapshot.mjs'

const results = join(bridge, 'test-results')
const ROOM = `crew-${Date.now().toString(36)}`
let stack
const tabs = {}

const shot = async (tab, name) => {
  await tab.page.waitForTimeout(250) // the panel's last render
  await tab.page.screenshot({ path: join(results, `e2e-crew-${name}-${tab.name}.png`) })
}
const fairies = (tab) => tab.page.evaluate(() => window.__steward.handle.state.fairies.map((f) => ({ id: f.id, name: f.name, mode: f.mode })))
const waitFairyNamed = (tab, name) =>
  tab.page.waitForFunction((n) => window.__steward.handle.state.fairies.some((f) => f.name === n), name, { timeout: WAIT })

async function converge(list, label) {
  const deadline = Date.now() + WAIT
  let snaps = []
  while (Date.now() < deadline) {
    snaps = await Promise.all(list.map(snapshot))
    if (snaps.every((s) => s === snaps[0])) return JSON.parse(snaps[0])
    await new Promise((r) => setTimeout(r, 250))
  }
  assert.fail(`${label}: canvases differ (${snaps.map((s) => s.length).join(' vs ')} bytes)`)
}

async function prompt(tab, message) {
  const reply = await tab.page.evaluate((m) => window.__steward.handle.prompt(m), message)
  assert.ok(reply.sessionId, `prompt refused: ${reply.error}`)
  return reply.sessionId
}

const projectOf = (tab, sessionId) =>
  tab.page.evaluate((s) => window.__steward.handle.state.projects.find((p) => p.sessionId === s) ?? null, sessionId)
const waitProject = (tab, sessionId, predicate, arg = null) =>
  tab.page.waitForFunction(
    ([s, src, a]) => {
      const p = window.__steward.handle.state.projects.find((q) => q.sessionId === s)
      return !!p && new Function('p', 'a', `return (${src})(p, a)`)(p, a)
    },
    [sessionId, predicate.toString(), arg],
    { timeout: WAIT * 2 },
  )

before(async () => {
  mkdirSync(results, { recursive: true })
  let info
  // The scripted model streams slowly enough that an abort lands while drones still draw.
  process.env.STEWARD_SCRIPTED_TOKENS_PER_S = '80'
  ;({ child: stack, info } = await startStack(ROOM))
  tabs.info = info
  tabs.t1 = await openTab(info, 't1', ROOM)
  tabs.t2 = await openTab(info, 't2', ROOM)
})

after(async () => {
  for (const t of [tabs.t1, tabs.t2, tabs.t3]) if (t) await t.close()
  await stopStack(stack)
})

test('summon a fourth fairy from the panel and rename it from another tab', async () => {
  const { t1, t2 } = tabs
  await t1.page.waitForFunction(() => window.__steward.handle.state.fairies.length === 3, null, { timeout: WAIT })
  await shot(t1, '1-default-crew')
  await t1.page.click('[data-testid=crew-summon]')
  await t1.page.fill('[data-testid=crew-summon-name]', 'Wisp')
  await t1.page.fill('[data-testid=crew-summon-personality]', 'shy, draws in thin lines')
  await t1.page.selectOption('[data-testid=crew-summon-color]', 'blue')
  await shot(t1, '2-summon-form')
  await t1.page.click('[data-testid=crew-summon-send]')
  for (const t of [t1, t2]) await waitFairyNamed(t, 'Wisp')
  const crew = await fairies(t2)
  assert.equal(crew.length, 4, JSON.stringify(crew))
  const wisp = crew.find((f) => f.name === 'Wisp')
  assert.equal(wisp.id, 'fairy-4')
  await shot(t2, '3-summoned')

  // A second fairy of the same name is refused with a clear error, and nothing changes.
  const dup = await t2.page.evaluate(() => window.__steward.handle.summon({ name: 'wisp' }))
  assert.match(dup.error ?? '', /already has a fairy named "Wisp"/)
  const long = await t2.page.evaluate(() => window.__steward.handle.summon({ name: 'x'.repeat(40) }))
  assert.match(long.error ?? '', /invalid request/)
  const unknown = await t2.page.evaluate(() => window.__steward.handle.rename('fairy-9', 'Ghost'))
  assert.match(unknown.error ?? '', /no fairy "fairy-9"/)

  // Renamed from the other tab's panel.
  await t2.page.click('[data-testid=crew-fairy][data-fairy=fairy-4] [data-testid=crew-rename]')
  await t2.page.fill('[data-testid=crew-rename-input]', 'Moth')
  await t2.page.click('[data-testid=crew-rename-save]')
  for (const t of [t1, t2]) await waitFairyNamed(t, 'Moth')
  assert.deepEqual((await fairies(t1)).map((f) => f.name), ['Bramble', 'Clover', 'Fennel', 'Moth'])
  await shot(t1, '4-renamed')
})

test("a project's card shows every task's owner and status as they change, in every tab", async () => {
  const { t1, t2 } = tabs
  const sid = await prompt(t1, 'project: draw a farm')
  // The card appears under the prompt in both tabs; sample what the tasks show as they go.
  await waitProject(t2, sid, (p) => (p.tasks ?? []).length > 0)
  const seen = new Set()
  const deadline = Date.now() + WAIT * 4
  let last = null
  let midShot = false
  while (Date.now() < deadline) {
    last = await projectOf(t2, sid)
    for (const task of last.tasks ?? []) seen.add(`${task.id}:${task.status}:${task.owner ?? ''}`)
    const ts = last.tasks ?? []
    if (!midShot && ts.some((t) => t.status === 'done') && ts.some((t) => t.status !== 'done')) {
      midShot = true
      // This tab's camera only (no document change): the whole drawing beside the card.
      await t2.page.evaluate(() => window.__steward.editor.zoomToFit({ animation: { duration: 0 } }))
      await shot(t2, '5-project-working')
    }
    if (last.status !== 'active') break
    await new Promise((r) => setTimeout(r, 150))
  }
  assert.equal(last.status, 'done', `project ended ${last.status}`)
  const tasks = last.tasks ?? []
  assert.ok(tasks.length >= 2, JSON.stringify(tasks))
  for (const t of tasks) {
    assert.equal(t.status, 'done', JSON.stringify(t))
    assert.ok(t.owner, `task ${t.id} has no owner`)
    assert.ok(t.area && t.area.w > 0, `task ${t.id} has no area`)
  }
  // Statuses changed while we watched: some task was seen in progress before done.
  assert.ok([...seen].some((s) => s.includes(':in-progress:')), `never saw a task in progress: ${[...seen]}`)
  // The card in the DOM says the same in both tabs, owner names included.
  for (const t of [t1, t2]) {
    await t.page.waitForFunction(
      (n) => {
        const rows = [...document.querySelectorAll('[data-testid=project-card] [data-testid=project-task]')]
        return rows.length === n && rows.every((r) => r.dataset.status === 'done' && r.dataset.owner)
      },
      tasks.length,
      { timeout: WAIT },
    )
  }
  // A tab that joins now is sent the project's card.
  tabs.t3 = await openTab(tabs.info, 't3', ROOM)
  await waitProject(tabs.t3, sid, (p, n) => p.status === 'done' && (p.tasks ?? []).length === n, tasks.length)
  await converge([t1, t2, tabs.t3], 'after the project')
  // A click on a task flies the clicker's camera to its area (and only the clicker's).
  const before2 = await t2.page.evaluate(() => window.__steward.editor.getCamera())
  const cam = async (t) => t.page.evaluate(() => window.__steward.editor.getViewportPageBounds().toJson())
  await t1.page.click('[data-testid=project-card] [data-testid=project-task] .task-title')
  await t1.page.waitForTimeout(400)
  const view = await cam(t1)
  const area = tasks[0].area
  assert.ok(view.x <= area.x && view.y <= area.y && view.x + view.w >= area.x + area.w, `view ${JSON.stringify(view)} misses ${JSON.stringify(area)}`)
  assert.deepEqual(await t2.page.evaluate(() => window.__steward.editor.getCamera()), before2)
  await shot(t1, '6-project-done')
  await shot(tabs.t3, '6-project-late-tab')
})

test('follow keeps the camera on a fairy; abort mid-project stops it for everyone, no previews left', async () => {
  const { t1, t2, t3 } = tabs
  const sid = await prompt(t2, 'project: draw a town')
  await waitProject(t1, sid, (p) => (p.tasks ?? []).some((t) => t.status === 'in-progress'))
  const pid = (await projectOf(t1, sid)).projectId
  const working = (await projectOf(t1, sid)).tasks.find((t) => t.status === 'in-progress').owner
  // t3 follows the working drone: its camera goes where the drone is.
  await t3.page.click(`[data-testid=crew-fairy][data-fairy=${working}] [data-testid=crew-follow]`)
  await t3.page.waitForTimeout(400)
  const [pos, center] = await t3.page.evaluate((id) => {
    const f = window.__steward.handle.state.fairies.find((q) => q.id === id)
    return [f.position, window.__steward.editor.getViewportPageBounds().center.toJson()]
  }, working)
  assert.ok(Math.hypot(pos.x - center.x, pos.y - center.y) < 400, `camera ${JSON.stringify(center)} is not on ${JSON.stringify(pos)}`)
  await shot(t3, '7-following')

  // t1 did not ask for it and is no moderator: its abort is refused and said so.
  await t1.page.click(`[data-testid=project-card][data-project=${pid}] [data-testid=project-abort]`)
  await t1.page.waitForSelector(`[data-testid=project-card][data-project=${pid}] [data-testid=project-error]`, { timeout: WAIT })
  assert.match(await t1.page.textContent(`[data-testid=project-card][data-project=${pid}] [data-testid=project-error]`), /only who asked for this project/)
  assert.equal((await projectOf(t1, sid)).status, 'active')
  // The asker aborts it from the card while a drone's shape is still a preview (locked).
  await t2.page.waitForFunction(() => window.__steward.editor.getCurrentPageShapes().some((s) => s.isLocked), null, { timeout: WAIT })
  await shot(t2, '8-before-abort')
  await t2.page.click(`[data-testid=project-card][data-project=${pid}] [data-testid=project-abort]`)
  for (const t of [t1, t2, t3]) await waitProject(t, sid, (p) => p.status === 'aborted')
  // The lead said so in the chat.
  await t1.page.waitForFunction(() => window.__steward.handle.state.chat.some((m) => /aborted/i.test(m.text)), null, { timeout: WAIT })
  // Every fairy stops: none left working.
  await t1.page.waitForFunction(() => window.__steward.handle.state.fairies.every((f) => !f.mode.startsWith('working') && !f.mode.startsWith('orchestrating')), null, { timeout: WAIT })
  const aborted = await projectOf(t1, sid)
  assert.ok((aborted.tasks ?? []).some((t) => t.status !== 'done'), `every task was done before the abort: ${JSON.stringify(aborted.tasks)}`)
  const recs = await converge([t1, t2, t3], 'after the abort')
  assert.ok(recs.every((r) => r.typeName !== 'shape' || r.isLocked === false), 'a half-drawn preview was left behind')
  await t3.page.click(`[data-testid=crew-fairy][data-fairy=${working}] [data-testid=crew-follow]`) // unfollow
  await shot(t1, '9-aborted')
  await shot(t2, '9-aborted')
})

test('undo a whole project as one revert: every tab back to before it', async () => {
  const { t1, t2, t3 } = tabs
  const sid = (await t2.page.evaluate(() => window.__steward.handle.state.prompts.find((p) => p.text === 'project: draw a town')?.sessionId))
  const pid = (await projectOf(t2, sid)).projectId
  const shapesBefore = (await converge([t1, t2, t3], 'before the undo')).filter((r) => r.typeName === 'shape').length
  const reply = await t2.page.evaluate((p) => window.__steward.handle.revertProject(p), pid)
  assert.ok(reply.sessionId, `undo refused: ${reply.error}`)
  for (const t of [t1, t2, t3]) await t.page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'done', reply.sessionId, { timeout: WAIT })
  // The reply names the project by its title, as its card does, never by its id.
  const said = await t2.page.waitForFunction(
    (s) => window.__steward.handle.state.chat.find((m) => m.sessionId === s && m.role === 'assistant')?.text ?? null,
    reply.sessionId,
    { timeout: WAIT },
  )
  assert.match(await said.jsonValue(), /^Took back the project "[^"]+": \d+ shape changes?\.$/)
  const after = await converge([t1, t2, t3], 'after undoing the project')
  assert.ok(after.filter((r) => r.typeName === 'shape').length < shapesBefore, 'the project undo took nothing back')
  await shot(t2, '10-project-undone')
})

test('a fairy picked in one tab and dismissed from another drops out of the picks', async () => {
  const { t1, t2 } = tabs
  const [moth] = (await fairies(t1)).filter((f) => f.id === 'fairy-4').map((f) => f.name)
  const [lead] = (await fairies(t1)).filter((f) => f.id === 'fairy-1').map((f) => f.name)
  for (const id of ['fairy-4', 'fairy-1']) await t1.page.click(`[data-testid=crew-fairy][data-fairy=${id}] [data-testid=crew-pick]`)
  assert.equal(await t1.page.textContent('[data-testid=picks-sentence]'), `${moth} leads, ${lead} draws with it.`)
  await shot(t1, '11-picked')
  await t2.page.click('[data-testid=crew-fairy][data-fairy=fairy-4] [data-testid=crew-dismiss]')
  await t1.page.waitForFunction(() => !window.__steward.handle.state.fairies.some((f) => f.id === 'fairy-4'), null, { timeout: WAIT })
  await t1.page.waitForFunction((s) => document.querySelector('[data-testid=picks-sentence]')?.textContent === s, `${lead} works it solo.`, { timeout: WAIT })
  assert.equal(await t1.page.getAttribute('[data-testid=picks]', 'data-picks'), 'fairy-1')
  assert.equal(await t1.page.getAttribute('[data-testid=crew-fairy][data-fairy=fairy-1] [data-testid=crew-pick]', 'data-order'), '1')
  await shot(t1, '12-picked-one-dismissed')
  await t1.page.click('[data-testid=picks-clear]')
  assert.equal(await t1.page.getAttribute('[data-testid=picks]', 'data-picks'), '')
})
