// The steward side panel: connection/host indicator, chat with a prompt box, streamed
// status, the todo list and a cancel button.
import { useEffect, useRef, useState, type FormEvent } from 'react'
import { MAX_PROMPT_CHARS } from '../protocol.gen'
import type { StewardHandle } from '../steward'
import { useStewardState } from './useSteward'

const DONE = new Set(['done', 'canceled', 'error'])

export function StewardPanel({ handle, room, identity }: { handle: StewardHandle | null; room?: string; identity?: string }) {
  const state = useStewardState(handle)
  const [text, setText] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const chatEnd = useRef<HTMLDivElement>(null)
  useEffect(() => {
    chatEnd.current?.scrollIntoView({ block: 'end' })
  }, [state?.chat.length])

  if (!handle || !state) return <aside className="steward-panel">connecting…</aside>
  const active = state.activeSession ? state.sessions[state.activeSession] : undefined
  const running = !!active && !DONE.has(active.status)

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const message = text.trim()
    if (!message) return
    setBusy(true)
    setError(null)
    const reply = await handle.prompt(message)
    setBusy(false)
    if (reply.error) setError(reply.error)
    else setText('')
  }

  return (
    <aside className="steward-panel" data-testid="steward-panel">
      <header className="steward-indicator" data-status={state.status} data-host={state.isHost ? 'yes' : 'no'}>
        <span className={`dot dot-${state.status}`} aria-hidden />
        <span data-testid="connection">{state.status}</span>
        {state.isHost && <span className="badge" data-testid="host-badge">host</span>}
        {!state.stewardPresent && <span className="badge warn">steward absent</span>}
        {room && <span className="room">room {room}{identity ? ` · ${identity}` : ''}</span>}
      </header>

      <section className="steward-chat" data-testid="chat">
        {state.chat.map((m) => (
          <div key={m.id} className={`msg msg-${m.role}`} data-partial={m.partial ? 'yes' : 'no'}>
            {m.fairy && <b>{m.fairy}: </b>}
            {m.text}
          </div>
        ))}
        {state.thoughts.slice(-3).map((t, i) => (
          <div key={`t${i}`} className="msg msg-thought">
            {t.kind === 'think' ? '💭 ' : 'ℹ️ '}
            {t.text}
          </div>
        ))}
        <div ref={chatEnd} />
      </section>

      {active && (
        <div className="steward-status" data-testid="status" data-session={active.sessionId} data-state={active.status}>
          {active.fairy ? `${active.fairy}: ` : ''}
          {active.status}
          {active.detail ? ` — ${active.detail}` : ''}
        </div>
      )}

      {state.todos.length > 0 && (
        <ul className="steward-todos" data-testid="todos">
          {state.todos.map((t) => (
            <li key={t.id} data-status={t.status}>
              <span className="todo-mark">{t.status === 'done' ? '✔' : t.status === 'in-progress' ? '➜' : '○'}</span> {t.text}
            </li>
          ))}
        </ul>
      )}

      <form className="steward-prompt" onSubmit={submit}>
        <textarea
          data-testid="prompt"
          value={text}
          maxLength={MAX_PROMPT_CHARS}
          placeholder="Ask the steward… (e.g. draw a flow chart of our signup)"
          // The steward prefetches the host's context while the user types (throttled).
          onFocus={() => handle.composing()}
          onChange={(e) => {
            setText(e.target.value)
            handle.composing()
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault()
              void submit(e as unknown as FormEvent)
            }
          }}
        />
        <div className="row">
          <button type="submit" disabled={busy || state.status !== 'connected'} data-testid="send">
            Send
          </button>
          <button type="button" disabled={!running} data-testid="cancel" onClick={() => void handle.cancel()}>
            Cancel
          </button>
        </div>
        {error && <div className="steward-error" role="alert">{error}</div>}
      </form>
    </aside>
  )
}
