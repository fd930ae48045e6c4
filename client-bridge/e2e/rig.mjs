// The e2e rig: the stack (livekit-server, Postgres and the steward, stack.py), other helper
// processes, and Chromium tabs on the page the stack serves. Must run inside the network
// namespace (ops/netns-run.sh): libwebrtc ignores loopback interfaces.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

export const here = dirname(fileURLToPath(import.meta.url))
export const bridge = resolve(here, '..')
export const repo = resolve(bridge, '..')
export const WAIT = 30_000
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** Starts a child process; resolves with the child and the first JSON line it printed
 * (60 s bound). With E2E_VERBOSE its output goes to stderr as it comes. */
export function startProcess(what, cmd, args, opts = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], ...opts })
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 60 s\n${err.slice(-3000)}`)), 60_000)
    child.stdout.on('data', (d) => {
      out += d
      if (process.env.E2E_VERBOSE) process.stderr.write(d)
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (line) {
        clearTimeout(timer)
        resolvePromise({ child, info: JSON.parse(line), stderr: () => err })
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

/** Starts stack.py for `room`, its HTTP API serving `dist` (the demo page by default), with
 * `env` added to the steward's settings; resolves with the child and the URLs it printed. */
export function startStack(room, { dist = join(bridge, 'demo', 'dist'), env = {} } = {}) {
  return startProcess('the stack', 'uv', ['run', '--frozen', 'python', join(here, 'stack.py'), room, dist], {
    cwd: repo,
    env: { ...process.env, STEWARD_LOG_FORMAT: 'json', STEWARD_LOG_LEVEL: process.env.STEWARD_LOG_LEVEL ?? 'warning', ...env },
  })
}

/** Stops a child started here: stdin closed, then SIGKILL if it is still there after 20 s. */
export async function stopStack(child) {
  if (!child || child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.stdin.end()
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  await exited
  clearTimeout(timer)
}

/** In a page: the steward bridge is connected, sees the steward and knows the host. */
export function stewardReady() {
  const s = window.__steward?.handle.state
  return s && s.status === 'connected' && s.stewardPresent && s.host
}

/** Waits (bounded) until `ready` holds in the tab's page. */
export async function waitReady(tab, ready = stewardReady) {
  await tab.page.waitForFunction(ready, null, { timeout: WAIT })
}

/** A Chromium tab on the stack's page in `room` (`query` appended to its URL), once `ready`
 * holds in it; its microphone (when the page opens one) plays the WAV file `audio`. */
export async function openTab(stackInfo, name, room, { audio, query = '', ready = stewardReady } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `steward-chromium-${name}-`))
  const mic = audio ? ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${audio}`] : []
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [...FLAGS, ...mic],
    viewport: { width: 1280, height: 800 },
  })
  const close = async () => {
    await context.close().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
  const page = context.pages()[0] ?? (await context.newPage())
  page.on('pageerror', (e) => console.error(`[${name}] page error:`, e.stack ?? e.message))
  if (process.env.E2E_VERBOSE) page.on('console', (m) => console.error(`[${name}] ${m.text()}`))
  const tab = { name, context, page, close }
  try {
    await page.goto(`${stackInfo.page}/?room=${room}${query}`, { timeout: WAIT })
    await waitReady(tab, ready)
  } catch (e) {
    await close()
    throw e
  }
  return tab
}

/** Waits (bounded) until the canvases `take()` returns (canonical snapshots, named by `names`)
 * are all the same; returns it parsed. Fails naming the records that differ. */
export async function sameEverywhere(names, take, label) {
  const deadline = Date.now() + WAIT
  let snaps = []
  while (Date.now() < deadline) {
    snaps = await take()
    if (snaps.every((s) => s === snaps[0])) return JSON.parse(snaps[0])
    await new Promise((r) => setTimeout(r, 250))
  }
  const [a, ...rest] = snaps.map((s) => new Map(JSON.parse(s).map((r) => [r.id, JSON.stringify(r)])))
  const diffs = []
  for (const [i, b] of rest.entries()) {
    for (const id of new Set([...a.keys(), ...b.keys()])) {
      if (a.get(id) !== b.get(id)) diffs.push(`${names[0]} vs ${names[i + 1]} ${id}:\n  ${a.get(id)}\n  ${b.get(id)}`)
    }
  }
  assert.fail(`${label}: canvases differ\n${diffs.slice(0, 6).join('\n')}`)
}

/** Sends `message` as the tab's prompt; its session id (a refusal fails the test). */
export async function prompt(tab, message) {
  const reply = await tab.page.evaluate((m) => window.__steward.handle.prompt(m), message)
  assert.ok(reply.sessionId, `prompt refused: ${reply.error}`)
  return reply.sessionId
}

/** Waits (bounded) until the tab sees session `sid` in status `wanted`. */
export const waitStatus = (tab, sid, wanted = 'done') =>
  tab.page.waitForFunction(([s, w]) => window.__steward.handle.state.sessions[s]?.status === w, [sid, wanted], { timeout: WAIT })

/** How many envelopes the tab's executor has applied. */
export const appliedCount = (tab) => tab.page.evaluate(() => window.__steward.handle.executor.appliedLog.length)
