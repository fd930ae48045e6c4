// The e2e rig: the stack (livekit-server, Postgres and the steward, stack.py) and Chromium tabs
// on the demo page it serves. Must run inside the network namespace (ops/netns-run.sh).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const here = dirname(fileURLToPath(import.meta.url))
export const bridge = resolve(here, '..')
export const repo = resolve(bridge, '..')
export const WAIT = 30_000
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** Starts stack.py for `room`; resolves with the child and the URLs it printed. */
export function startStack(room) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('uv', ['run', '--frozen', 'python', join(here, 'stack.py'), room, join(bridge, 'demo', 'dist')], {
      cwd: repo,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, STEWARD_LOG_FORMAT: 'json', STEWARD_LOG_LEVEL: process.env.STEWARD_LOG_LEVEL ?? 'warning' },
    })
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`stack did not start in 60 s\n${err.slice(-3000)}`)), 60_000)
    child.stdout.on('data', (d) => {
      out += d
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
      reject(new Error(`stack exited with ${code}\n${err.slice(-3000)}`))
    })
  })
}

/** Stops the stack: stdin closed, then SIGKILL if it is still there after 20 s. */
export async function stopStack(child) {
  if (!child || child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.stdin.end()
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  await exited
  clearTimeout(timer)
}

/** A Chromium tab on the demo page in `room`, once it is connected and sees the steward;
 * its microphone (when the page opens one) plays the WAV file `audio`. */
export async function openTab(stackInfo, name, room, { audio } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `steward-chromium-${name}-`))
  const mic = audio ? ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${audio}`] : []
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [...FLAGS, ...mic],
    viewport: { width: 1280, height: 800 },
  })
  const page = context.pages()[0] ?? (await context.newPage())
  page.on('pageerror', (e) => console.error(`[${name}] page error:`, e.stack ?? e.message))
  await page.goto(`${stackInfo.page}/?room=${room}`)
  await page.waitForFunction(
    () => {
      const s = window.__steward?.handle.state
      return s && s.status === 'connected' && s.stewardPresent && s.host
    },
    null,
    { timeout: WAIT },
  )
  const close = async () => {
    await context.close().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
  return { name, context, page, close }
}
