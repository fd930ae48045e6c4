// The steward side panel: connection/host indicator, the room's crew, the room's conversation
// as cards in the steward's one order (each prompt with who asked, a project's card under the
// prompt that started it, then everything done for it in time order, its fairies' messages
// included, each fairy named once, each run's thoughts folded into one row, and its status;
// "show" when what it drew is out of view; "undo" takes the run back, "redo" on an undo's own
// run), a prompt box with the fairies picked to work it (picked by clicking them in the crew
// list; a sentence above Send says who works it and how), the todo list and a cancel button.
import { useEffect, useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { useValue } from 'tldraw'
import { MAX_PROMPT_CHARS, type Box, type FairyPresence } from '../protocol.gen'
import type { StewardHandle } from '../steward'
import { CrewList } from './CrewList'
import { busyPicks, pickSentence, usePicks } from './picks'
import { ProjectCard } from './ProjectCard'
import { runStatusLabel, statusDetail } from './statuses'
import { outOfView, timeline, type Run, type ThoughtItem } from './timeline'
import { useStewardState } from './useSteward'

const DONE = new Set(['done', 'canceled', 'error'])
const NO_FAIRIES: FairyPresence[] = []

export function StewardPanel({ handle, room, identity }: { handle: StewardHandle | null; room?: string; identity?: string }) {
  const state = useStewardState(handle)
  const [text, setText] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  // The run this tab's last Send started: when the steward refuses it (a busy fairy, one that
  // left), its reason shows under the prompt box.
  const [sent, setSent] = useState<string | null>(null)
  const picking = usePicks(state?.fairies ?? NO_FAIRIES)
  const chatEnd = useRef<HTMLDivElement>(null)
  // Fairies by the names their overlay shows, not their ids.
  const names = useMemo(() => Object.fromEntries((state?.fairies ?? []).map((f) => [f.id, f.name])), [state?.fairies])
  // Projects (when the steward tells them) put their fairies' runs under their prompt's card.
  // Each project's card sits under its prompt, and its fairies' runs in that prompt's card.
  const projects = state?.projects
  const runs = useMemo(
    () => (state ? timeline({ ...state, projects, names }) : []),
    [state?.prompts, state?.chat, state?.thoughts, state?.sessions, projects, names],
  )
  // This tab's view, followed as the user pans and zooms (it decides where "show" is offered).
  const view = useValue(
    'steward panel view',
    () => {
      const b = handle?.editor.getViewportPageBounds()
      return b ? { x: b.x, y: b.y, w: b.w, h: b.h } : null
    },
    [handle],
  )
  useEffect(() => {
    chatEnd.current?.scrollIntoView({ block: 'end' })
  }, [state?.chat.length, state?.prompts.length, state?.thoughts.length])

  if (!handle || !state) return <aside className="steward-panel">connecting…</aside>
  const active = state.activeSession ? state.sessions[state.activeSession] : undefined
  const running = !!active && !DONE.has(active.status)

  const submit = async (e: FormEvent) => {
    e.preventDefault()
    const message = text.trim()
    if (!message) return
    setBusy(true)
    setError(null)
    const reply = await handle.prompt(message, picking.picks.length > 0 ? { fairies: picking.picks } : {})
    setBusy(false)
    setSent(reply.sessionId ?? null)
    if (reply.error) setError(reply.error)
    else setText('')
  }
  // New picks: the last refusal (about the old ones) goes.
  const pick = (fairyId: string) => {
    setSent(null)
    setError(null)
    picking.toggle(fairyId)
  }
  const sentStatus = sent ? state.sessions[sent] : undefined
  const refused = sentStatus?.status === 'error' ? statusDetail(sentStatus.detail) || 'The steward could not run it.' : null
  const busyNow = busyPicks(picking.picks, state.fairies)

  return (
    <aside className="steward-panel" data-testid="steward-panel">
      <header className="steward-indicator" data-status={state.status} data-host={state.isHost ? 'yes' : 'no'}>
        <span className={`dot dot-${state.status}`} aria-hidden />
        <span data-testid="connection">{state.status}</span>
        {state.isHost && <span className="badge" data-testid="host-badge">host</span>}
        {!state.stewardPresent && <span className="badge warn">steward absent</span>}
        {room && <span className="room">room {room}{identity ? ` · ${identity}` : ''}</span>}
      </header>

      <CrewList handle={handle} fairies={state.fairies} following={state.following} picks={picking.picks} onPick={pick} />

      <section className="steward-chat" data-testid="chat">
        {runs.map((run) => (
          <RunView key={run.sessionId} run={run} me={identity} view={view} handle={handle} drawn={state.drawn[run.sessionId]?.length ?? 0} names={names}>
            {state.projects.filter((p) => p.sessionId === run.sessionId).map((p) => (
              <ProjectCard key={p.projectId} project={p} handle={handle} fairies={state.fairies} />
            ))}
          </RunView>
        ))}
        {/* A project whose prompt this tab never saw (a late tab): its card on its own. */}
        {state.projects.filter((p) => !runs.some((r) => r.sessionId === p.sessionId)).map((p) => (
          <ProjectCard key={p.projectId} project={p} handle={handle} fairies={state.fairies} />
        ))}
        <div ref={chatEnd} />
      </section>

      {active && !(refused && active.sessionId === sent) && (
        <div className="steward-status" data-testid="status" data-session={active.sessionId} data-state={active.status}>
          {active.fairy ? `${names[active.fairy] ?? active.fairy}: ` : ''}
          {runStatusLabel(active.status)}
          {active.detail ? ` — ${statusDetail(active.detail)}` : ''}
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
          aria-label="Prompt for the steward"
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
        <div className="steward-picks" data-testid="picks" data-picks={picking.picks.join(' ')}>
          <span className="who" data-testid="picks-sentence" aria-live="polite">
            {pickSentence(picking.picks, state.fairies)}
          </span>
          {picking.picks.length > 0 && (
            <button
              type="button"
              data-testid="picks-clear"
              aria-label="Clear the picked fairies"
              onClick={() => {
                setSent(null)
                picking.clear()
              }}
            >
              clear picks
            </button>
          )}
        </div>
        {busyNow.length > 0 && (
          <div className="steward-picks busy" data-testid="picks-busy" title="The steward refuses a busy fairy and says why: pick a free one, or send when it is done.">
            Busy now: {busyNow.join(', ')}
          </div>
        )}
        <div className="row">
          <button type="submit" disabled={busy || state.status !== 'connected'} data-testid="send">
            Send
          </button>
          <button type="button" disabled={!running} data-testid="cancel" onClick={() => void handle.cancel()}>
            Cancel
          </button>
        </div>
        {(error ?? refused) && (
          <div className="steward-error" role="alert" data-testid="prompt-error">
            {error ?? refused}
          </div>
        )}
      </form>
    </aside>
  )
}

function RunView({
  run,
  me,
  view,
  handle,
  drawn,
  names,
  children,
}: {
  run: Run
  me?: string
  view: Box | null
  handle: StewardHandle
  drawn: number
  names: Record<string, string>
  /** Shown right under the prompt (a project's card). */
  children?: ReactNode
}) {
  const fairy = (id?: string | null) => (id ? `${names[id] ?? id}: ` : '')
  // Recomputed when the view moves or the run draws more (`drawn`).
  const box = useMemo(() => (drawn > 0 ? handle.runBounds(run.sessionId) : null), [handle, run.sessionId, drawn, view])
  const hidden = !!view && outOfView(view, box)
  const status = run.status
  const [undoError, setUndoError] = useState<string | null>(null)
  const [undoing, setUndoing] = useState(false)
  const undo = async () => {
    setUndoing(true)
    setUndoError(null)
    const reply = await handle.revert(run.sessionId)
    setUndoing(false)
    if (reply.error) setUndoError(reply.error)
  }
  const redo = !!run.prompt?.reverts
  // A run refused before it drew anything (a busy pick, no grant) has nothing to undo.
  const refusedRun = status?.status === 'error' && drawn === 0
  return (
    <div className="run" data-testid="run" data-session={run.sessionId} data-sessions={run.sessions.join(' ')} data-state={status?.status ?? ''}>
      {run.prompt && (
        <div className="msg msg-prompt" data-testid="run-prompt" data-asker={run.prompt.asker}>
          <b className="asker">
            {run.prompt.asker === me ? `you (${run.prompt.asker})` : run.prompt.asker}
            {run.prompt.fairy ? ` → ${names[run.prompt.fairy] ?? run.prompt.fairy}` : ''}:{' '}
          </b>
          {run.prompt.text}
          {run.prompt.truncated ? '…' : ''}
        </div>
      )}
      {children}
      {run.entries.map((e) =>
        e.kind === 'message' ? (
          <div key={e.message.id} className={`msg msg-${e.message.role}`} data-testid="run-message" data-n={e.message.n} data-partial={e.message.partial ? 'yes' : 'no'}>
            {e.speaker && <b className="speaker">{fairy(e.speaker)}</b>}
            {e.message.text}
          </div>
        ) : (
          <Thoughts key={`t${e.sessionId}`} thoughts={e.thoughts} who={e.fairy ? names[e.fairy] ?? e.fairy : null} />
        ),
      )}
      {(status || hidden) && (
        <div className="run-status" data-testid="run-status">
          {status && !refusedRun && (
            <button
              type="button"
              className="undo"
              data-testid="run-undo"
              disabled={undoing}
              title={redo ? 'Do again what this undo took back' : 'Take this run back, for everyone'}
              onClick={() => void undo()}
            >
              {redo ? 'redo' : 'undo'}
            </button>
          )}
          {status && (
            <span>
              {fairy(status.fairy)}
              {runStatusLabel(status.status)}
              {status.detail ? ` — ${statusDetail(status.detail)}` : ''}
            </span>
          )}
          {hidden && (
            <button type="button" className="show" data-testid="run-show" title="Zoom to what this run drew" onClick={() => handle.show(run.sessionId)}>
              show
            </button>
          )}
        </div>
      )}
      {undoError && (
        <div className="steward-error" role="alert" data-testid="run-undo-error">
          {undoError}
        </div>
      )}
    </div>
  )
}

/** A run's thoughts, folded into one line until opened. */
function Thoughts({ thoughts, who }: { thoughts: ThoughtItem[]; who: string | null }) {
  const label = thoughts.length === 1 ? '1 thought' : `${thoughts.length} thoughts`
  return (
    <details className="msg msg-thought" data-testid="run-thoughts">
      <summary>
        💭 {who ? `${who} · ` : ''}
        {label}
      </summary>
      {thoughts.map((t) => (
        <div key={t.n}>
          {t.kind === 'think' ? '' : 'ℹ️ '}
          {t.text}
        </div>
      ))}
    </details>
  )
}
