import { copyFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

// The package build (`npm run build:lib`, run by `npm pack`): ESM in dist/, the app's own
// tldraw, livekit-client and React left as imports (peer dependencies), nothing of the demo.
const here = fileURLToPath(new URL('.', import.meta.url))
const PEERS = /^(react|react-dom|tldraw|livekit-client|@tldraw\/[^/]+)(\/.*)?$/

export default defineConfig({
  root: here,
  publicDir: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    minify: false,
    lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'index' },
    rollupOptions: {
      external: (id) => PEERS.test(id),
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return
        warn(warning)
      },
    },
  },
  plugins: [
    {
      name: 'steward-css',
      // The components' stylesheet ships as is, imported by the app when it wants it.
      writeBundle() {
        copyFileSync(`${here}src/ui/steward.css`, `${here}dist/steward.css`)
      },
    },
  ],
})
