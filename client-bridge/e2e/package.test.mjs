// End-to-end: the package as an app installs it. `npm pack` of client-bridge, installed into a
// fresh Vite + React + tldraw app generated outside the repository (its own tldraw,
// livekit-client and React from the npm cache, no network), type-checked against the shipped
// .d.ts, built with `vite build`, served by the steward, opened in two Chromium tabs against a
// real livekit-server, Postgres and steward: a prompt typed into the app's panel draws in both.
// With STEWARD_APP_REACT=18 the app is a React 18 app: its React, React DOM and their types are
// the versions test-apps/react18's lock file pins (`make setup` installs that app, which puts
// them in the npm cache), the rest as client-bridge's.
// Must run inside the network namespace (ops/netns-run.sh).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve, sep } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { snapshot } from './snapshot.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const bridge = resolve(here, '..')
const results = join(bridge, 'test-results')
const repo = resolve(bridge, '..')
const REACT = process.env.STEWARD_APP_REACT ?? '19'
assert.ok(['18', '19'].includes(REACT), `STEWARD_APP_REACT is 18 or 19, not ${REACT}`)
const ROOM = `pkg${REACT}-${Date.now().toString(36)}`
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const WAIT = 30_000
// npm as the running npm script was started (its own CLI on this node), else from PATH.
const NPM = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm']

const lock = JSON.parse(readFileSync(join(bridge, 'package-lock.json'), 'utf8'))
// React 18: the React 18 app's lock file (its React, React DOM, their types and what they need).
const react18Lock = REACT === '18' ? JSON.parse(readFileSync(join(bridge, 'test-apps', 'react18', 'package-lock.json'), 'utf8')) : null
const REACT_PACKAGES = ['react', 'react-dom', '@types/react', '@types/react-dom']
const work = mkdtempSync(join(tmpdir(), 'steward-fresh-app-'))
const app = join(work, 'app')
let stack
const contexts = []

// The environment without what a running npm script exports (`npm --prefix client-bridge test`
// exports npm_config_prefix, which would point the app's `npm install` at client-bridge).
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')))

/** Runs a command in `cwd` to its end within `ms`; fails with its output's tail otherwise. */
function run(cmd, args, cwd, ms) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { cwd, env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${cmd} ${args.join(' ')} took over ${ms / 1000} s\n${out.slice(-3000)}`))
    }, ms)
    child.on('exit', (code) => {
      clearTimeout(timer)
      if (code === 0) resolveRun(out)
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}\n${out.slice(-3000)}`))
    })
  })
}

/** The versions client-bridge's lock file has (React's from the React 18 app's, for React
 * 18): the npm cache holds exactly these. */
function locked(name) {
  const from = react18Lock && REACT_PACKAGES.includes(name) ? react18Lock : lock
  const version = from.packages[`node_modules/${name}`]?.version
  assert.ok(version, `${name} is in client-bridge's lock file`)
  return version
}

/** livekit-server, Postgres and the steward (e2e/stack.py), its HTTP API serving `dist`. */
function startStack(dist) {
  return new Promise((resolveStack, reject) => {
    const child = spawn('uv', ['run', '--frozen', 'python', join(here, 'stack.py'), ROOM, dist], {
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
        resolveStack({ child, info: JSON.parse(line) })
      }
    })
    child.stderr.on('data', (d) => (err += d))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`stack exited with ${code}\n${err.slice(-3000)}`))
    })
  })
}

async function openTab(name, page) {
  const dir = mkdtempSync(join(tmpdir(), `steward-chromium-${name}-`))
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
  })
  contexts.push({ context, dir })
  const tab = context.pages()[0] ?? (await context.newPage())
  tab.on('pageerror', (e) => console.error(`[${name}] page error:`, e.stack ?? e.message))
  await tab.goto(`${page}/?room=${ROOM}`, { timeout: WAIT })
  await tab.waitForFunction(() => {
    const s = window.__steward?.handle.state
    return s && s.status === 'connected' && s.stewardPresent && s.host
  }, null, { timeout: WAIT })
  return { name, page: tab }
}

before(async () => {
  assert.ok(!resolve(work).startsWith(repo + sep), `the app is generated outside the repository: ${work}`)
  // The package exactly as it would be published: `npm pack` builds it (prepack) and packs it.
  await run(NPM[0], [...NPM.slice(1), 'pack', '--pack-destination', work], bridge, 120_000)
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))
  assert.ok(tarball, 'npm pack wrote a tarball')
  mkdirSync(join(app, 'src'), { recursive: true })
  const deps = ['tldraw', '@tldraw/assets', 'livekit-client', 'react', 'react-dom']
  const devDeps = ['vite', 'typescript', '@types/react', '@types/react-dom']
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'fresh-steward-app',
      private: true,
      type: 'module',
      dependencies: { '@canvas-steward/client-bridge': `file:../${tarball}`, ...Object.fromEntries(deps.map((d) => [d, locked(d)])) },
      devDependencies: Object.fromEntries(devDeps.map((d) => [d, locked(d)])),
    }),
  )
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', jsx: 'react-jsx', strict: true, skipLibCheck: true, noEmit: true, lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
      include: ['src'],
    }),
  )
  writeFileSync(join(app, 'src', 'vite-env.d.ts'), "declare module '*.css'\n")
  writeFileSync(
    join(app, 'index.html'),
    '<!doctype html><html><head><meta charset="UTF-8" /><title>fresh app</title><style>body{margin:0}</style></head><body><div id="root"></div><script type="module" src="./src/main.tsx"></script></body></html>\n',
  )
  copyFileSync(join(here, 'fresh-app', 'main.tsx'), join(app, 'src', 'main.tsx'))
  // Online, `npm install` would resolve these versions from the registry. Here the npm cache
  // holds their tarballs but not always the registry's metadata, so the app's lock file starts
  // as client-bridge's (same versions; npm prunes what the app does not use), and npm is not
  // asked to look peers up in the registry (--legacy-peer-deps): `npm ls` checks them after.
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
  const packages = { ...lock.packages, ...(react18Lock?.packages ?? {}) }
  const seed = { ...lock, name: manifest.name, packages: { ...packages, '': { name: manifest.name, dependencies: manifest.dependencies, devDependencies: manifest.devDependencies } } }
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify(seed, null, 2))
  // From the npm cache only: the test needs no network (and the namespace has none).
  await run(NPM[0], [...NPM.slice(1), 'install', '--offline', '--legacy-peer-deps', '--no-audit', '--no-fund', '--loglevel', 'error'], app, 180_000)
  // Every peer the package names is met by the app's own copy (npm ls fails on a missing or
  // out-of-range peer).
  await run(NPM[0], [...NPM.slice(1), 'ls', '--offline'], app, 60_000)
  // One tldraw: the package brought none of its own.
  const nested = readdirSync(join(app, 'node_modules', '@canvas-steward', 'client-bridge'))
  assert.ok(!nested.includes('node_modules'), `the package installed no dependencies of its own: ${nested}`)
  assert.ok(!nested.includes('demo') && !nested.includes('src'), `the package holds no demo or sources: ${nested}`)
  const installed = JSON.parse(readFileSync(join(app, 'node_modules', '@canvas-steward', 'client-bridge', 'package.json'), 'utf8'))
  for (const peer of ['tldraw', 'livekit-client', 'react', 'react-dom']) {
    assert.ok(installed.peerDependencies?.[peer], `${peer} is a peer dependency`)
    assert.ok(!installed.dependencies?.[peer], `${peer} is not a dependency of the package`)
  }
  await run(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], app, 120_000)
  await run(process.execPath, [join(app, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], app, 180_000)
  stack = await startStack(join(app, 'dist'))
})

after(async () => {
  for (const { context, dir } of contexts) {
    await context.close().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
  if (stack) {
    stack.child.stdin.end()
    stack.child.kill('SIGTERM')
  }
  rmSync(work, { recursive: true, force: true })
})

test(`a prompt typed into the fresh app (React ${REACT}) draws in both of its tabs`, async () => {
  const page = stack.info.page
  const t1 = await openTab('a1', page)
  const t2 = await openTab('a2', page)
  // The app runs on the React it installed (the package brought none of its own).
  const reactVersion = await t1.page.evaluate(() => window.__reactVersion)
  assert.equal(reactVersion?.split('.')[0], REACT, `the app renders with React ${REACT}: ${reactVersion}`)
  const before = await snapshot(t1)
  assert.equal(before, '[]', 'the canvas starts empty')
  // As a user does it: the panel's prompt box and its send button.
  await t2.page.fill('[data-testid="prompt"]', 'draw a flow chart of our signup')
  await t2.page.click('[data-testid="send"]')
  await t2.page.waitForSelector('[data-testid="status"][data-state="done"]', { timeout: WAIT })
  await t1.page.waitForSelector('[data-testid="status"][data-state="done"]', { timeout: WAIT })
  const deadline = Date.now() + WAIT
  let snaps = []
  while (Date.now() < deadline) {
    snaps = await Promise.all([t1, t2].map(snapshot))
    if (snaps[0] === snaps[1] && snaps[0] !== '[]') break
    await new Promise((r) => setTimeout(r, 250))
  }
  assert.equal(snaps[0], snaps[1], 'both tabs show the same canvas')
  const shapes = JSON.parse(snaps[0]).filter((r) => r.typeName === 'shape')
  assert.ok(shapes.length >= 3, `the run drew a chart: ${shapes.length} shapes`)
  assert.ok(shapes.some((s) => s.type === 'arrow'), 'with arrows between its steps')
  // The fairy overlay from the package renders on the app's canvas.
  assert.ok((await t1.page.locator('.steward-fairies').count()) > 0, 'the fairy overlay is on the canvas')
  // The panel shows the prompt and the run's reply in both tabs.
  for (const t of [t1, t2]) await t.page.waitForSelector('[data-testid="run-message"]', { timeout: WAIT })
  mkdirSync(results, { recursive: true })
  await t1.page.screenshot({ path: join(results, `package-react${REACT}.png`) })
})
