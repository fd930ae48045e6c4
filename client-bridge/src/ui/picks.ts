// The fairies a user picks in the panel to work their next prompt, in the order picked: one
// works it solo, two as a duo (the first leads and also draws), three or more as a project the
// first one leads. A pick of a fairy that left the crew drops out; a busy fairy stays picked
// (the steward says why when it cannot take the prompt).
import { useCallback, useEffect, useMemo, useState } from 'react'
import type { FairyPresence } from '../protocol.gen'

/** The fairy ids picked, first picked first. */
export type Picks = readonly string[]

/** `picks` with `fairyId` added last, or taken out (the others keep their order). */
export function togglePick(picks: Picks, fairyId: string): string[] {
  return picks.includes(fairyId) ? picks.filter((id) => id !== fairyId) : [...picks, fairyId]
}

/** The picks of fairies still in the crew, in the order picked. */
export function livePicks(picks: Picks, fairies: readonly FairyPresence[]): string[] {
  const ids = new Set(fairies.map((f) => f.id))
  return picks.filter((id) => ids.has(id))
}

function names(list: string[]): string {
  return list.length <= 1 ? (list[0] ?? '') : `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`
}

/** Who will work the prompt and how, as the panel says it above Send. */
export function pickSentence(picks: Picks, fairies: readonly FairyPresence[]): string {
  const byId = new Map(fairies.map((f) => [f.id, f.name]))
  const [lead, ...others] = livePicks(picks, fairies).map((id) => byId.get(id) ?? id)
  if (lead === undefined) return 'No fairy picked: the steward chooses who works it.'
  if (others.length === 0) return `${lead} works it solo.`
  if (others.length === 1) return `${lead} leads, ${others[0]} draws with it.`
  return `${lead} leads a project with ${names(others)}.`
}

/** The names of the picked fairies that are busy now (the crew list shows what they do). */
export function busyPicks(picks: Picks, fairies: readonly FairyPresence[]): string[] {
  const byId = new Map(fairies.map((f) => [f.id, f]))
  return livePicks(picks, fairies)
    .map((id) => byId.get(id)!)
    .filter((f) => f.mode !== 'idling' && f.mode !== 'sleeping')
    .map((f) => f.name)
}

export interface PickState {
  /** The picks of fairies still in the crew, in the order picked. */
  picks: string[]
  toggle(fairyId: string): void
  clear(): void
}

/** The panel's picks as React state, against the crew as it is now. */
export function usePicks(fairies: readonly FairyPresence[]): PickState {
  const [picked, setPicked] = useState<Picks>([])
  const picks = useMemo(() => livePicks(picked, fairies), [picked, fairies])
  // A dismissed fairy's pick is forgotten, so a later fairy given its id is not picked.
  useEffect(() => {
    if (picks.length !== picked.length) setPicked(picks)
  }, [picks, picked])
  const toggle = useCallback((fairyId: string) => setPicked((p) => togglePick(p, fairyId)), [])
  const clear = useCallback(() => setPicked([]), [])
  return { picks, toggle, clear }
}
