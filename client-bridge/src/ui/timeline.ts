// The chat panel's content as runs: each prompt with who asked, then that run's messages and
// thoughts in the order they arrived, then its status. Pure, so it is tested without React.
import type { Box, ChatMessage, PromptNotice, StatusMessage } from '../protocol.gen'

/** Anything shown in the panel carries `n`, the order it reached this tab in. */
export interface Arrived {
  n: number
}

export interface ThoughtItem extends Arrived {
  sessionId: string
  kind: 'think' | 'detail'
  text: string
}

export type ChatItem = ChatMessage & Arrived
export type PromptItem = PromptNotice & Arrived

/** One entry of a run: a message, or consecutive thoughts (shown collapsed as one). */
export type RunEntry = { kind: 'message'; message: ChatItem } | { kind: 'thoughts'; thoughts: ThoughtItem[] }

export interface Run {
  sessionId: string
  /** What was asked and by whom; none for runs the steward started itself. */
  prompt: PromptItem | null
  entries: RunEntry[]
  status: StatusMessage | null
}

export interface TimelineInput {
  prompts: PromptItem[]
  chat: ChatItem[]
  thoughts: ThoughtItem[]
  sessions: Record<string, StatusMessage>
}

/** Runs in the order their first item arrived; inside a run, items in arrival order. */
export function timeline({ prompts, chat, thoughts, sessions }: TimelineInput): Run[] {
  const runs = new Map<string, { first: number; run: Run; items: Array<ChatItem | ThoughtItem> }>()
  const runOf = (sessionId: string, n: number) => {
    let r = runs.get(sessionId)
    if (!r) {
      r = { first: n, run: { sessionId, prompt: null, entries: [], status: sessions[sessionId] ?? null }, items: [] }
      runs.set(sessionId, r)
    }
    r.first = Math.min(r.first, n)
    return r
  }
  for (const p of prompts) runOf(p.sessionId, p.n).run.prompt = p
  for (const m of chat) runOf(m.sessionId, m.n).items.push(m)
  for (const t of thoughts) runOf(t.sessionId, t.n).items.push(t)
  const ordered = [...runs.values()].sort((a, b) => a.first - b.first)
  for (const { run, items } of ordered) {
    items.sort((a, b) => a.n - b.n)
    for (const item of items) {
      if (isThought(item)) {
        const last = run.entries[run.entries.length - 1]
        if (last?.kind === 'thoughts') last.thoughts.push(item)
        else run.entries.push({ kind: 'thoughts', thoughts: [item] })
      } else run.entries.push({ kind: 'message', message: item })
    }
  }
  return ordered.map((r) => r.run)
}

const isThought = (item: ChatItem | ThoughtItem): item is ThoughtItem => 'kind' in item && !('role' in item)

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
