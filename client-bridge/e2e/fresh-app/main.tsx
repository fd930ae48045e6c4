// A fresh app as a developer writes it from the package README: its own tldraw, livekit-client
// and React, the steward through `useSteward`, the panel beside the canvas and the fairies on it.
// (The e2e test copies this file into an app it generates outside the repository.)
import { FairyOverlay, StewardPanel, useSteward, type StewardHandle } from '@canvas-steward/client-bridge'
import '@canvas-steward/client-bridge/steward.css'
import { getAssetUrlsByImport } from '@tldraw/assets/imports.vite'
import { Room } from 'livekit-client'
import { useEffect, useMemo, useState, version as reactVersion } from 'react'
import { createRoot } from 'react-dom/client'
import { Tldraw, type Editor, type TLComponents } from 'tldraw'
import 'tldraw/tldraw.css'

declare global {
  interface Window {
    __steward?: { editor: Editor; handle: StewardHandle }
    __reactVersion?: string
  }
}

const params = new URLSearchParams(location.search)
const roomName = params.get('room') ?? 'fresh'
const identity = `app-${Math.random().toString(36).slice(2, 8)}`
const assetUrls = getAssetUrlsByImport()
window.__reactVersion = reactVersion

function App() {
  const [room, setRoom] = useState<Room | null>(null)
  const [editor, setEditor] = useState<Editor | null>(null)
  useEffect(() => {
    const r = new Room()
    fetch(`/api/dev/token?room=${encodeURIComponent(roomName)}&identity=${identity}`)
      .then((res) => res.json() as Promise<{ token: string; url: string }>)
      .then(({ token, url }) => r.connect(url, token))
      .then(() => setRoom(r))
    return () => void r.disconnect()
  }, [])
  const steward = useSteward(room, editor)
  useEffect(() => {
    if (editor && steward) window.__steward = { editor, handle: steward }
  }, [editor, steward])
  const components = useMemo<TLComponents>(() => ({ InFrontOfTheCanvas: () => <FairyOverlay handle={steward} /> }), [steward])
  return (
    <div style={{ display: 'flex', height: '100vh' }}>
      <div style={{ flex: 1, position: 'relative' }}>
        <Tldraw onMount={setEditor} components={components} assetUrls={assetUrls} />
      </div>
      <StewardPanel handle={steward} room={roomName} identity={identity} />
    </div>
  )
}

createRoot(document.getElementById('root')!).render(<App />)
