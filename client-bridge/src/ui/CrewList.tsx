// The room's crew: each fairy with its colour, name and mode; a click on a fairy picks it to
// work the next prompt (with `onPick`; its number says the order picked) or else flies this
// tab's camera to it; "follow" keeps the camera on it; rename and dismiss it; summon a new one
// (name, personality, colour). The steward decides who may change the crew and says why not.
import { useState, type FormEvent } from 'react'
import { MAX_FAIRY_NAME_CHARS, MAX_PERSONALITY_CHARS, type FairyPresence, type SummonRequest } from '../protocol.gen'
import type { StewardHandle } from '../steward'
import { cssColor } from './FairyOverlay'
import { modeLabel } from './modes'

type FairyColor = NonNullable<SummonRequest['color']>
const COLORS: FairyColor[] = ['violet', 'green', 'orange', 'blue', 'red', 'yellow', 'light-violet', 'light-green', 'light-blue', 'light-red', 'grey', 'black']

export function CrewList({
  handle,
  fairies,
  following,
  picks,
  onPick,
}: {
  handle: StewardHandle
  fairies: FairyPresence[]
  following: string | null
  /** The fairies picked for the next prompt, first picked first (shown with their number). */
  picks?: readonly string[]
  /** Picks or unpicks a fairy; without it a click on a fairy flies the camera to it. */
  onPick?: (fairyId: string) => void
}) {
  const [error, setError] = useState<string | null>(null)
  const [renaming, setRenaming] = useState<string | null>(null)
  const [newName, setNewName] = useState('')
  const [summoning, setSummoning] = useState(false)
  const [name, setName] = useState('')
  const [personality, setPersonality] = useState('')
  const [color, setColor] = useState<FairyColor | ''>('')
  const answer = async (reply: Promise<{ error?: string | null }>) => {
    setError(null)
    const r = await reply
    if (r.error) setError(r.error)
    return !r.error
  }
  const rename = async (e: FormEvent, id: string) => {
    e.preventDefault()
    if (await answer(handle.rename(id, newName))) setRenaming(null)
  }
  const summon = async (e: FormEvent) => {
    e.preventDefault()
    if (await answer(handle.summon({ name, personality, color: color || null }))) {
      setSummoning(false)
      setName('')
      setPersonality('')
      setColor('')
    }
  }
  return (
    <section className="steward-crew" data-testid="crew">
      <ul>
        {fairies.map((f) => (
          <li key={f.id} data-testid="crew-fairy" data-fairy={f.id} data-name={f.name}>
            {renaming === f.id ? (
              <form className="crew-rename" onSubmit={(e) => void rename(e, f.id)}>
                <span className="crew-dot" style={{ background: cssColor(f.color) }} aria-hidden />
                <input data-testid="crew-rename-input" aria-label={`New name for ${f.name}`} value={newName} maxLength={MAX_FAIRY_NAME_CHARS} autoFocus onChange={(e) => setNewName(e.target.value)} />
                <button type="submit" data-testid="crew-rename-save">save</button>
              </form>
            ) : onPick ? (
              <PickButton fairy={f} order={(picks ?? []).indexOf(f.id) + 1} onPick={onPick} />
            ) : (
              <button type="button" className="crew-name" title={`Fly to ${f.name}`} onClick={() => handle.flyTo(f)}>
                <span className="crew-dot" style={{ background: cssColor(f.color) }} aria-hidden />
                {f.name}
              </button>
            )}
            <span className="crew-mode" title={f.mode}>{modeLabel(f.mode)}</span>
            {onPick && (
              <button type="button" data-testid="crew-fly" title={`Fly to ${f.name}`} aria-label={`Fly to ${f.name}`} onClick={() => handle.flyTo(f)}>
                go to
              </button>
            )}
            <button
              type="button"
              className={following === f.id ? 'crew-follow on' : 'crew-follow'}
              data-testid="crew-follow"
              title="Keep the camera on this fairy"
              onClick={() => handle.follow(following === f.id ? null : f.id)}
            >
              {following === f.id ? 'following' : 'follow'}
            </button>
            <button
              type="button"
              data-testid="crew-rename"
              title={`Rename ${f.name}`}
              aria-label={`Rename ${f.name}`}
              onClick={() => {
                setRenaming(f.id)
                setNewName(f.name)
              }}
            >
              ✎
            </button>
            <button type="button" data-testid="crew-dismiss" title={`Dismiss ${f.name}`} aria-label={`Dismiss ${f.name}`} onClick={() => void answer(handle.dismiss(f.id))}>
              ×
            </button>
          </li>
        ))}
      </ul>
      {summoning ? (
        <form className="crew-summon" data-testid="crew-summon-form" onSubmit={(e) => void summon(e)}>
          <input data-testid="crew-summon-name" placeholder="name" required value={name} maxLength={MAX_FAIRY_NAME_CHARS} onChange={(e) => setName(e.target.value)} />
          <input data-testid="crew-summon-personality" placeholder="personality (optional)" value={personality} maxLength={MAX_PERSONALITY_CHARS} onChange={(e) => setPersonality(e.target.value)} />
          <select data-testid="crew-summon-color" value={color} onChange={(e) => setColor(e.target.value as FairyColor | '')}>
            <option value="">any colour</option>
            {COLORS.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
          <div className="row">
            <button type="submit" data-testid="crew-summon-send">summon</button>
            <button type="button" onClick={() => setSummoning(false)}>cancel</button>
          </div>
        </form>
      ) : (
        <button type="button" className="crew-add" data-testid="crew-summon" onClick={() => setSummoning(true)}>
          + summon a fairy
        </button>
      )}
      {error && (
        <div className="steward-error" role="alert" data-testid="crew-error">
          {error}
        </div>
      )}
    </section>
  )
}

/** A fairy's avatar and name as a toggle: pressed when picked, with its number in the order. */
function PickButton({ fairy, order, onPick }: { fairy: FairyPresence; order: number; onPick: (fairyId: string) => void }) {
  const picked = order > 0
  return (
    <button
      type="button"
      className="crew-name crew-pick"
      data-testid="crew-pick"
      data-order={order || undefined}
      aria-pressed={picked}
      aria-label={picked ? `Pick ${fairy.name} (picked ${order})` : `Pick ${fairy.name}`}
      title={picked ? `Picked ${order}: click to unpick ${fairy.name}` : `Pick ${fairy.name} to work your next prompt`}
      style={{ borderColor: picked ? cssColor(fairy.color) : 'transparent' }}
      onClick={() => onPick(fairy.id)}
    >
      <span className="crew-dot" style={{ background: cssColor(fairy.color) }} aria-hidden>
        {picked ? order : ''}
      </span>
      {fairy.name}
    </button>
  )
}
