// The unit tests again on React 18 (the version test-apps/react18 pins; `make setup` installs
// it): the package's hooks and components must work on both majors its peers allow.
import { fileURLToPath } from 'node:url'
import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.ts'

const react18 = (name: string) => fileURLToPath(new URL(`./test-apps/react18/node_modules/${name}`, import.meta.url))

export default mergeConfig(
  base,
  defineConfig({
    resolve: { alias: [{ find: /^react-dom(\/.*)?$/, replacement: `${react18('react-dom')}$1` }, { find: /^react(\/.*)?$/, replacement: `${react18('react')}$1` }] },
    test: { env: { STEWARD_REACT: '18' }, server: { deps: { inline: ['tldraw', '@tldraw/editor', '@tldraw/state-react', '@tldraw/utils', '@tldraw/store', '@tldraw/tlschema', '@tldraw/state', '@tldraw/validate'] } } },
  }),
)
