import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

// The steward's HTTP API (token endpoint); `steward dev` listens on 127.0.0.1:8787.
const api = process.env.STEWARD_HTTP_URL ?? 'http://127.0.0.1:8787'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  server: { host: '127.0.0.1', port: Number(process.env.DEMO_PORT ?? 5173), proxy: { '/api': api } },
  preview: { host: '127.0.0.1' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 4096,
    sourcemap: false,
    minify: process.env.DEMO_MINIFY !== '0',
    rollupOptions: {
      // tldraw's dependencies carry React "use client" directives: harmless in a bundle.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return
        warn(warning)
      },
    },
  },
})
