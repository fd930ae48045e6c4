// An app that already syncs its document with tldraw sync (`useSync` against a
// `TLSocketRoom` server), with the steward in host mode: only the host tab applies the
// agent's edits and tldraw sync carries them to every other tab.
// URL: /?room=<room>&sync=<ws://sync-server>
import { getAssetUrlsByImport } from '@tldraw/assets/imports.vite'
import { useSync } from '@tldraw/sync'
import { Room } from 'livekit-client'
import { useEffect, useMemo, useState } from 'react'
import { createRoot } from 'react-dom/client'
import { Tldraw, type Editor, type TLAssetStore } from 'tldraw'
import 'tldraw/tldraw.css'
import { connectSteward, readPage, type StewardHandle, type VoiceHandle } from '../../src/index'

declare global {
  interface Window {
    // The same shape as the demo's (the e2e helpers read it); no voice here. `page`: the
    // canvas as steward records (the e2e tests compare it with the outbox mirror).
    __steward?: { editor: Editor; handle: StewardHandle; room: Room; identity: string; voice: VoiceHandle | null; page?: () => unknown[] }
    __sync?: { status: string; connection?: string }
  }
}

const params = new URLSearchParams(location.search)
const roomName = params.get('room') ?? 'sync-demo'
const syncUrl = params.get('sync') ?? 'ws://127.0.0.1:5858'
const identity = `user-${Math.random().toString(36).slice(2, 8)}`
const assetUrls = getAssetUrlsByImport()

// Assets stay inline (data URLs): the test draws none, but useSync needs a store.
const assets: TLAssetStore = {
  upload: async (_asset, file) =>
    ({ src: await new Promise<string>((done) => {
      const reader = new FileReader()
      reader.onload = () => done(String(reader.result))
      reader.readAsDataURL(file)
    }) }),
  resolve: (asset) => asset.props.src,
}

async function fetchToken(): Promise<{ token: string; url: string }> {
  const res = await fetch(`/api/dev/token?room=${encodeURIComponent(roomName)}&identity=${encodeURIComponent(identity)}`)
  if (!res.ok) throw new Error(`token endpoint answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as { token: string; url: string }
}

function App() {
  const store = useSync({ uri: `${syncUrl}/connect/${encodeURIComponent(roomName)}`, assets })
  const [room, setRoom] = useState<Room | null>(null)
  const [error, setError] = useState<string | null>(null)
  window.__sync = { status: store.status, connection: store.status === 'synced-remote' ? store.connectionStatus : undefined }

  useEffect(() => {
    const r = new Room({ adaptiveStream: false, dynacast: false })
    fetchToken()
      .then(({ token, url }) => r.connect(url, token))
      .then(() => setRoom(r))
      .catch((err: unknown) => setError(String(err)))
    return () => void r.disconnect()
  }, [])

  const ready = useMemo(() => room !== null && store.status === 'synced-remote', [room, store.status])
  if (error) return <div>Could not join: {error}</div>
  if (store.status === 'error') return <div>Sync failed: {String(store.error)}</div>
  if (!ready || !room) return <div>connecting…</div>
  return (
    <Tldraw
      store={store.store}
      assetUrls={assetUrls}
      onMount={(editor) => {
        const handle = connectSteward({ room, editor, options: { mode: 'host' } })
        window.__steward = { editor, handle, room, identity, voice: null, page: () => [...readPage(editor).values()] }
      }}
    />
  )
}

createRoot(document.getElementById('root')!).render(<App />)
