// End-to-end: LiveKit's own conventions, driven by livekit-client itself in Chromium against a
// real livekit-server, Postgres and the steward (scripted model). A prompt sent with
// `sendText(…, {topic: 'lk.chat'})` runs and draws, the agent's reply comes back on `lk.chat`,
// and the steward's `lk.agent.state` attribute reads thinking during the run and idle after;
// the same prompt from a participant without the grant is refused as the RPC refuses it.
// Must run inside the network namespace (ops/netns-run.sh): libwebrtc ignores loopback.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { WAIT, openTab, repo, startStack, stopStack } from './rig.mjs'

const ROOM = `lkc-${Date.now().toString(36)}`
// The tab's microphone plays this (espeak-ng speech, made in before()) once the page opens it.
const SPOKEN = join(mkdtempSync(join(tmpdir(), 'steward-lkc-voice-')), 'flow.wav')
let stack
let tab

const participant = async (identity) =>
  (await fetch(`${stack.info.participant}?identity=${encodeURIComponent(identity)}`)).json()

async function until(what, check, timeout = WAIT) {
  const deadline = Date.now() + timeout
  let last
  while (Date.now() < deadline) {
    last = await check()
    if (last) return last
    await new Promise((r) => setTimeout(r, 100))
  }
  assert.fail(`timed out waiting for ${what}`)
}

// Waits for the page's noted `lk.agent.state`s to end idle after a thinking; on a timeout the
// failure says what was noted, and what the steward logged about setting the attribute.
async function settledIdle(page) {
  try {
    await page.waitForFunction(() => window.__lk.states.at(-1) === 'idle' && window.__lk.states.includes('thinking'), null, { timeout: WAIT })
  } catch (err) {
    const states = await page.evaluate(() => window.__lk.states)
    const logged = stack.stderr().split('\n').filter((l) => l.includes('agent_state'))
    assert.fail(`lk.agent.state went ${states.join(' → ')}; the steward logged: ${logged.join('\n') || 'nothing'} (${err.message})`)
  }
  return page.evaluate(() => window.__lk.states)
}

// In a page: note the steward's `lk.agent.state` as it changes, and every `lk.chat` message.
function watch(key) {
  const room = key === '__lk' ? window.__steward.room : window[key].room
  const seen = (window[key] = { ...(window[key] ?? {}), room, states: [], chat: [] })
  const note = () => {
    const agent = [...room.remoteParticipants.values()].find((p) => p.isAgent)
    const state = agent?.attributes['lk.agent.state']
    if (state && seen.states.at(-1) !== state) seen.states.push(state)
  }
  note()
  room.on('participantAttributesChanged', note)
  room.on('participantConnected', note)
  room.registerTextStreamHandler('lk.chat', async (reader, from) => {
    const text = await reader.readAll()
    seen.chat.push({ from: from.identity, text })
  })
}

before(async () => {
  process.env.STEWARD_LOG_LEVEL ??= 'info' // the refusal's log line is an info line
  const made = spawnSync('uv', ['run', '--frozen', 'python', '-m', 'steward_tools.voice.speech', SPOKEN, '1.5', 'steward, draw a flow chart of our signup'], { cwd: repo, encoding: 'utf8' })
  assert.equal(made.status, 0, `speech synthesis failed: ${made.stderr}`)
  stack = await startStack(ROOM)
  tab = await openTab(stack.info, 'lk1', ROOM, { audio: SPOKEN })
  await tab.page.evaluate(watch, '__lk')
})

after(async () => {
  await tab?.close()
  await stopStack(stack?.child)
  rmSync(dirname(SPOKEN), { recursive: true, force: true })
})

test("a prompt on lk.chat runs and draws; the reply is on lk.chat; lk.agent.state is thinking, then idle", async () => {
  const { page } = tab
  await page.waitForFunction(() => window.__lk.states.at(-1) === 'idle', null, { timeout: WAIT })
  const me = await page.evaluate(() => window.__steward.identity)
  const before = await page.evaluate(() => window.__steward.editor.getCurrentPageShapes().length)
  const sent = await page.evaluate(
    async (m) => (await window.__steward.room.localParticipant.sendText(m, { topic: 'lk.chat' })).id,
    'draw a flow chart of our signup',
  )
  assert.ok(sent, 'livekit-client sent the stream')
  const { runs } = await until('the run', async () => {
    const p = await participant(me)
    return p.runs.length === 1 && p
  })
  const sid = runs[0]
  // The page sees the run as any: its prompt notice, statuses and envelopes.
  await page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'done', sid, { timeout: WAIT })
  const drawn = await page.evaluate(() => window.__steward.editor.getCurrentPageShapes().length)
  assert.ok(drawn >= before + 4, `the run drew shapes: ${before} → ${drawn}`)
  // The agent's chat, on lk.chat, from the steward participant.
  const steward = await page.evaluate(() => [...window.__steward.room.remoteParticipants.values()].find((p) => p.isAgent)?.identity)
  const replies = await page.waitForFunction(
    (who) => {
      const got = window.__lk.chat.filter((m) => m.from === who && m.text.trim())
      return got.length ? got : null
    },
    steward,
    { timeout: WAIT },
  )
  const chat = await replies.jsonValue()
  assert.ok(chat.length >= 1, 'a reply on lk.chat')
  assert.ok(chat.every((m) => !/Not run/.test(m.text)), `no refusal: ${JSON.stringify(chat)}`)
  // thinking while the run worked, idle once it ended; never anything else in between.
  const states = await settledIdle(page)
  assert.deepEqual(states, ['idle', 'thinking', 'idle'], `lk.agent.state went ${states.join(' → ')}`)
})

test('an lk.chat prompt without the grant is refused like the RPC: a reply to the sender, a strike, nothing run', async () => {
  const { page } = tab
  const who = `nogrant-${Date.now().toString(36)}`
  const { token, url } = await (await fetch(`${stack.info.token}?identity=${who}`)).json()
  await page.evaluate(
    async ({ token, url }) => {
      // livekit-client's own Room class, as the page loaded it, for a second participant.
      const room = new window.__steward.room.constructor()
      window.__nogrant = { room }
      await room.connect(url, token)
    },
    { token, url },
  )
  await page.evaluate(watch, '__nogrant')
  await until('the steward to know the participant', async () => (await participant(who)).known)
  const fromAgent = () => {
    const agent = [...window.__steward.room.remoteParticipants.values()].find((p) => p.isAgent)
    return window.__lk.chat.filter((m) => m.from === agent?.identity)
  }
  const agentBefore = (await page.evaluate(fromAgent)).length
  const sent = await page.evaluate(
    async (m) => (await window.__nogrant.room.localParticipant.sendText(m, { topic: 'lk.chat' })).id,
    'draw a cat',
  )
  const answer = await page.waitForFunction(() => window.__nogrant.chat[0] ?? null, null, { timeout: WAIT })
  const reply = await answer.jsonValue()
  assert.match(reply.text, /not allowed to prompt in this room/)
  assert.ok(sent, 'livekit-client sent the stream')
  const seen = await until('the strike', async () => {
    const p = await participant(who)
    return p.strikes >= 1 && p
  })
  assert.deepEqual(seen.runs, [], 'nothing ran')
  assert.equal(seen.strikes, 1, 'one refusal, one strike')
  // The refusal went to the sender alone; the room's state never left idle. A marker the
  // steward sends this tab afterwards (its answer to "redo" with nothing to redo) comes down
  // the steward's one ordered data channel: had the refusal gone to everyone, it would be
  // here before the marker. No fixed wait decides the absence.
  const statesBefore = await page.evaluate(() => window.__lk.states.length)
  await page.evaluate(async () => window.__steward.room.localParticipant.sendText('redo', { topic: 'lk.chat' }))
  const agentChat = await (
    await page.waitForFunction(
      (n) => {
        const agent = [...window.__steward.room.remoteParticipants.values()].find((p) => p.isAgent)
        const got = window.__lk.chat.filter((m) => m.from === agent?.identity)
        return got.length > n ? got : null
      },
      agentBefore,
      { timeout: WAIT },
    )
  ).jsonValue()
  assert.equal(agentChat.length, agentBefore + 1, `only the marker came: ${JSON.stringify(agentChat)}`)
  assert.match(agentChat.at(-1).text, /redo/, `the marker is the answer to "redo": ${agentChat.at(-1).text}`)
  assert.ok(agentChat.every((m) => !/not allowed to prompt/.test(m.text)), `nobody else got the refusal: ${JSON.stringify(agentChat)}`)
  assert.deepEqual(await page.evaluate((n) => window.__lk.states.slice(n), statesBefore), [], 'the state never left idle')
  assert.equal(await page.evaluate(() => window.__lk.states.at(-1)), 'idle')
  await until('the refusal logged', async () => {
    const lines = stack.stderr().split('\n').filter((l) => l.includes('"prompt_refused"') && l.includes(who))
    return lines.find((l) => l.includes('"source": "chat"') || l.includes('"source":"chat"'))
  })
  await page.evaluate(() => window.__nogrant.room.disconnect())
})

test('a spoken request: lk.agent.state is listening while the steward hears it, thinking during the run, idle after', async () => {
  const { page } = tab
  await page.waitForFunction(() => window.__lk.states.at(-1) === 'idle', null, { timeout: WAIT })
  await page.evaluate(() => void (window.__lk.states = ['idle']))
  const known = await page.evaluate(() => Object.keys(window.__steward.handle.state.sessions))
  const box = await page.getByTestId('mic').boundingBox()
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
  // Push to talk, held until the request ran: the file loops, so holding on would say it again.
  await page.mouse.down()
  let sid
  try {
    await page.waitForFunction(() => window.__lk.states.includes('listening'), null, { timeout: WAIT })
    const started = await page.waitForFunction((k) => Object.keys(window.__steward.handle.state.sessions).find((s) => !k.includes(s)), known, { timeout: WAIT })
    sid = await started.jsonValue()
  } finally {
    await page.mouse.up()
  }
  await page.waitForFunction((s) => window.__steward.handle.state.sessions[s]?.status === 'done', sid, { timeout: WAIT })
  const states = await settledIdle(page)
  assert.deepEqual(states, ['idle', 'listening', 'thinking', 'idle'], `lk.agent.state went ${states.join(' → ')}`)
})
