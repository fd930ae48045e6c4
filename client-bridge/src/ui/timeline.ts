// The chat panel's content: the room's conversation in its one order (`n`, numbered by the
// steward, so every tab, live or late, shows the same), as cards. A card is a prompt with who
// asked, then everything done for it in time order: its own run's messages and, for a project,
// those of its fairies' runs. Each run's thoughts fold into one row, each fairy is named once
// per turn of speech. Pure, so it is tested without React.
import type { Box, ChatMessage, PromptNotice, StatusMessage, ThoughtMessage } from '../protocol.gen'

/** Anything shown in the panel carries `n`, its place in the room's conversation. */
export interface Arrived {
  n: number
}

export type ThoughtItem = ThoughtMessage & Arrived
export type ChatItem = ChatMessage & Arrived
export type PromptItem = PromptNotice & Arrived

/** One entry of a card: a message (`speaker`: the fairy to name before it, only when the
 * speaker changes), or a run's thoughts folded into one row. */
export type RunEntry =
  | { kind: 'message'; message: ChatItem; speaker: string | null }
  | { kind: 'thoughts'; sessionId: string; fairy: string | null; thoughts: ThoughtItem[] }

export interface Run {
  /** The card's run: the prompt's, or a run the steward started itself with no prompt. */
  sessionId: string
  /** What was asked and by whom; none for runs the steward started itself. */
  prompt: PromptItem | null
  entries: RunEntry[]
  status: StatusMessage | null
  /** Every run shown in this card (the card's own first, then its fairies' runs). */
  sessions: string[]
}

/** A project as the panel groups it: the prompt's run that started it and its fairies. */
export interface ProjectGroup {
  sessionId?: string | null
  lead?: string
  members?: string[]
}

export interface TimelineInput {
  prompts: PromptItem[]
  chat: ChatItem[]
  thoughts: ThoughtItem[]
  sessions: Record<string, StatusMessage>
  /** Known projects: a fairy's run goes under the card of its project's prompt. */
  projects?: ProjectGroup[]
  /** Fairy ids to names, so a message that starts with its own fairy's name is not named twice. */
  names?: Record<string, string>
}

type Item = ({ type: 'chat' } & ChatItem) | ({ type: 'thought' } & ThoughtItem)

/** Cards in the order of their first item; inside a card, items in the room's order. */
export function timeline({ prompts, chat, thoughts, sessions, projects = [], names = {} }: TimelineInput): Run[] {
  // Every run: its first item, its fairy, its items.
  const runs = new Map<string, { first: number; fairy: string | null; items: Item[] }>()
  const runOf = (sessionId: string, n: number, fairy?: string | null) => {
    let r = runs.get(sessionId)
    if (!r) runs.set(sessionId, (r = { first: n, fairy: null, items: [] }))
    r.first = Math.min(r.first, n)
    r.fairy = r.fairy ?? fairy ?? null
    return r
  }
  const promptOf = new Map(prompts.map((p) => [p.sessionId, p]))
  for (const p of prompts) runOf(p.sessionId, p.n)
  for (const m of chat) runOf(m.sessionId, m.n, m.fairy).items.push({ type: 'chat', ...m })
  for (const t of thoughts) runOf(t.sessionId, t.n, t.fairy).items.push({ type: 'thought', ...t })
  for (const [sid, s] of Object.entries(sessions)) if (runs.has(sid) && s.fairy) runOf(sid, Infinity, s.fairy)

  // Each run with no prompt of its own (a fairy's run) joins the card of its project's prompt,
  // or else of the latest prompt before it that is not an undo.
  const ordered = [...runs.entries()].sort((a, b) => a[1].first - b[1].first)
  const cardOf = new Map<string, string>()
  let lastPrompt: string | null = null
  for (const [sid, r] of ordered) {
    const p = promptOf.get(sid)
    if (p) {
      cardOf.set(sid, sid)
      if (!p.reverts) lastPrompt = sid
      continue
    }
    const project = r.fairy ? projects.find((pr) => pr.sessionId && runs.has(pr.sessionId) && (pr.lead === r.fairy || pr.members?.includes(r.fairy!)) && runs.get(pr.sessionId)!.first <= r.first) : undefined
    cardOf.set(sid, project?.sessionId ?? lastPrompt ?? sid)
  }

  const cards = new Map<string, { run: Run; items: Item[] }>()
  for (const [sid, r] of ordered) {
    const card = cardOf.get(sid)!
    let c = cards.get(card)
    if (!c) cards.set(card, (c = { run: { sessionId: card, prompt: promptOf.get(card) ?? null, entries: [], status: sessions[card] ?? null, sessions: [] }, items: [] }))
    c.run.sessions.push(sid)
    c.items.push(...r.items)
  }
  for (const { run, items } of cards.values()) {
    items.sort((a, b) => a.n - b.n)
    const folded = new Map<string, Extract<RunEntry, { kind: 'thoughts' }>>()
    let speaker: string | null = null
    for (const item of items) {
      if (item.type === 'thought') {
        const { type: _t, ...thought } = item
        const row = folded.get(item.sessionId)
        if (row) row.thoughts.push(thought)
        else {
          const entry = { kind: 'thoughts' as const, sessionId: item.sessionId, fairy: item.fairy ?? null, thoughts: [thought] }
          folded.set(item.sessionId, entry)
          run.entries.push(entry)
        }
        continue
      }
      const { type: _t, ...message } = item
      const fairy = message.fairy ?? null
      run.entries.push({ kind: 'message', message: { ...message, text: unnamed(message.text, fairy ? names[fairy] ?? fairy : null) }, speaker: fairy !== speaker ? fairy : null })
      speaker = fairy
    }
  }
  return [...cards.values()].map((c) => c.run)
}

/** The text without a leading "<name>:" (the panel names the fairy itself). */
function unnamed(text: string, name: string | null): string {
  if (!name) return text
  const head = `${name}:`
  return text.trimStart().toLowerCase().startsWith(head.toLowerCase()) ? text.trimStart().slice(head.length).trimStart() : text
}

/** The smallest box around `boxes` (null: none). */
export function unionBox(boxes: Iterable<Box | null | undefined>): Box | null {
  let out: { x0: number; y0: number; x1: number; y1: number } | null = null
  for (const b of boxes) {
    if (!b) continue
    out = out
      ? { x0: Math.min(out.x0, b.x), y0: Math.min(out.y0, b.y), x1: Math.max(out.x1, b.x + b.w), y1: Math.max(out.y1, b.y + b.h) }
      : { x0: b.x, y0: b.y, x1: b.x + b.w, y1: b.y + b.h }
  }
  return out && { x: out.x0, y: out.y0, w: out.x1 - out.x0, h: out.y1 - out.y0 }
}

/** Whether some of `drawn` lies outside `view` (then the panel offers to show it). */
export function outOfView(view: Box, drawn: Box | null): boolean {
  if (!drawn) return false
  return drawn.x < view.x || drawn.y < view.y || drawn.x + drawn.w > view.x + view.w || drawn.y + drawn.h > view.y + view.h
}
