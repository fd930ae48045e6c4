// Demo: join a room by name, draw together, ask the steward. Every tab on the same room
// sees and edits the same canvas. The token comes from the steward's dev endpoint
// `GET /api/dev/token?room=<room>&identity=<identity>` → `{token, url}`. It uses the package
// as an app would: `useSteward`, `StewardPanel`, `FairyOverlay`, `connectVoice`, `VoiceBar`.
import { Room } from 'livekit-client'
import { useEffect, useMemo, useState } from 'react'
import { createRoot } from 'react-dom/client'
import { Tldraw, type Editor, type TLComponents } from 'tldraw'
import 'tldraw/tldraw.css'
import '../src/ui/steward.css'
import { getAssetUrlsByImport } from '@tldraw/assets/imports.vite'
import { connectVoice, FairyOverlay, readPage, StewardPanel, useSteward, VoiceBar, type StewardHandle, type VoiceHandle } from '../src/index'

declare global {
  interface Window {
    // For the e2e tests: `page` is the canvas as steward records (readPage).
    __steward?: { editor: Editor; handle: StewardHandle; room: Room; identity: string; voice: VoiceHandle | null; page?: () => unknown[] }
  }
}

// Fonts, icons and translations are bundled: the machine (and many deployments) has no CDN.
const assetUrls = getAssetUrlsByImport()

function tabIdentity(): string {
  // One identity per tab, kept across reloads so the steward recognises the tab.
  const key = 'steward-demo:identity'
  let id = sessionStorage.getItem(key)
  if (!id) {
    id = `user-${Math.random().toString(36).slice(2, 8)}`
    sessionStorage.setItem(key, id)
  }
  return id
}

async function fetchToken(room: string, identity: string): Promise<{ token: string; url: string }> {
  const res = await fetch(`/api/dev/token?room=${encodeURIComponent(room)}&identity=${encodeURIComponent(identity)}`)
  if (!res.ok) throw new Error(`token endpoint answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as { token: string; url: string }
}

function Join() {
  const [name, setName] = useState('demo')
  return (
    <form
      className="join"
      onSubmit={(e) => {
        e.preventDefault()
        const url = new URL(location.href)
        url.searchParams.set('room', name.trim() || 'demo')
        location.href = url.toString()
      }}
    >
      <h2>Canvas Steward</h2>
      <label>
        Room <input value={name} onChange={(e) => setName(e.target.value)} data-testid="room-name" />
      </label>
      <button type="submit">Join</button>
    </form>
  )
}

function CanvasRoom({ roomName }: { roomName: string }) {
  const identity = useMemo(tabIdentity, [])
  const [room, setRoom] = useState<Room | null>(null)
  const [editor, setEditor] = useState<Editor | null>(null)
  const [error, setError] = useState<string | null>(null)
  const mode = new URLSearchParams(location.search).get('mode') === 'host' ? 'host' : 'relay'
  // Connected while this component shows the room's canvas; null until both are there.
  const handle = useSteward(room, editor, { mode })

  useEffect(() => {
    const r = new Room({ adaptiveStream: false, dynacast: false })
    let cancelled = false
    fetchToken(roomName, identity)
      .then(({ token, url }) => r.connect(url, token))
      .then(() => !cancelled && setRoom(r))
      .catch((err: unknown) => setError(String(err)))
    return () => {
      cancelled = true
      void r.disconnect()
    }
  }, [roomName, identity])

  // Captions and push-to-talk, once the room is joined.
  const voice = useMemo(() => (room ? connectVoice(room) : null), [room])
  useEffect(() => () => voice?.close(), [voice])

  // For the browser tests and the console.
  useEffect(() => {
    if (handle && editor && room) window.__steward = { editor, handle, room, identity, voice, page: () => [...readPage(editor).values()] }
  }, [handle, editor, room, identity, voice])

  const components = useMemo<TLComponents>(() => ({ InFrontOfTheCanvas: () => <FairyOverlay handle={handle} /> }), [handle])

  if (error) return <div className="fatal">Could not join room “{roomName}”: {error}</div>
  if (!room) return <div className="fatal" style={{ color: '#444' }}>joining “{roomName}”…</div>
  return (
    <div className="app">
      <div className="canvas">
        <Tldraw components={components} assetUrls={assetUrls} onMount={setEditor} />
      </div>
      <div className="side">
        <StewardPanel handle={handle} room={roomName} identity={identity} />
        <VoiceBar handle={voice} identity={identity} />
      </div>
    </div>
  )
}

const roomName = new URLSearchParams(location.search).get('room')
createRoot(document.getElementById("root")!).render(roomName ? <CanvasRoom roomName={roomName} /> : <Join />)
