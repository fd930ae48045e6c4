// Push-to-talk microphone, who is speaking, and live captions from everyone in the room.
import type { VoiceHandle } from '../voice/voice'
import { useHandleState } from './useSteward'

export function VoiceBar({ handle, identity }: { handle: VoiceHandle | null; identity?: string }) {
  const state = useHandleState(handle)
  if (!handle || !state) return null
  // Held down: the microphone is open; released (or the pointer leaves): muted.
  const press = () => void handle.setMic(true)
  const release = () => {
    if (handle.state.micOn) void handle.setMic(false)
  }
  const talking = identity !== undefined && state.speaking.includes(identity)
  return (
    <section className="voice-bar" data-testid="voice">
      <div className="row">
        <button
          type="button"
          className={`mic ${state.micOn ? 'mic-on' : ''}`}
          data-testid="mic"
          data-state={state.micOn ? 'on' : 'off'}
          // Captured: the button keeps the pointer while held, whatever moves under it.
          onPointerDown={(e) => {
            e.currentTarget.setPointerCapture(e.pointerId)
            press()
          }}
          onPointerUp={release}
          onPointerCancel={release}
          onKeyDown={(e) => (e.key === ' ' || e.key === 'Enter') && !e.repeat && press()}
          onKeyUp={(e) => (e.key === ' ' || e.key === 'Enter') && release()}
          title='Hold to talk, e.g. "steward, draw a flow chart of our signup"'
        >
          {state.micOn ? '🎙 talking…' : '🎙 hold to talk'}
        </button>
        <span className={`speaking ${talking ? 'speaking-on' : ''}`} data-testid="speaking" data-speaking={state.speaking.join(',')}>
          {state.speaking.length ? `speaking: ${state.speaking.join(', ')}` : 'nobody speaking'}
        </span>
      </div>
      {state.micError && <div className="steward-error" role="alert">{state.micError}</div>}
      <ul className="captions" data-testid="captions">
        {state.captions.map((c) => (
          <li key={c.segmentId} data-final={c.final ? 'yes' : 'no'} data-speaker={c.speaker}>
            <b>{c.speaker}:</b> {c.text}
          </li>
        ))}
      </ul>
    </section>
  )
}
