import { describe, expect, it } from 'vitest'
import type { StatusMessage } from '../src/protocol.gen'
import { outOfView, timeline, unionBox, type ChatItem, type PromptItem, type Run, type ThoughtItem } from '../src/ui/timeline'

const prompt = (n: number, sessionId: string, asker: string, text: string): PromptItem => ({ n, sessionId, asker, source: 'browser', text, ts: n })
const say = (n: number, sessionId: string, text: string): ChatItem => ({ n, id: `m${n}`, sessionId, role: 'assistant', text, ts: n })
const think = (n: number, sessionId: string, text: string): ThoughtItem => ({ n, sessionId, kind: 'think', text })
const status = (sessionId: string, s: StatusMessage['status']): StatusMessage => ({ sessionId, status: s, ts: 0 })

// A run as lines: the prompt, then each entry ("say:" a message, "think:" a collapsed group).
const lines = (run: Run) => [
  ...(run.prompt ? [`${run.prompt.asker} asked: ${run.prompt.text}`] : []),
  ...run.entries.map((e) => (e.kind === 'message' ? `say: ${e.message.text}` : `think: ${e.thoughts.map((t) => t.text).join(' | ')}`)),
  `status: ${run.status?.status ?? '-'}`,
]

describe('the chat panel timeline', () => {
  it('shows each prompt with who asked, then its messages and thoughts in arrival order, then its status', () => {
    // Two runs overlapping in time: their items arrive interleaved.
    const runs = timeline({
      prompts: [prompt(1, 's1', 'ann', 'draw a barn'), prompt(4, 's2', 'bob', 'add a fence')],
      chat: [say(3, 's1', 'Drawing a barn.'), say(6, 's2', 'Fencing it.'), say(9, 's1', 'Done: a red barn.')],
      thoughts: [think(2, 's1', 'walls first'), think(5, 's2', 'around the barn'), think(7, 's1', 'then the roof'), think(8, 's1', 'and a door')],
      sessions: { s1: status('s1', 'done'), s2: status('s2', 'streaming') },
    })
    expect(runs.map(lines)).toEqual([
      ['ann asked: draw a barn', 'think: walls first', 'say: Drawing a barn.', 'think: then the roof | and a door', 'say: Done: a red barn.', 'status: done'],
      ['bob asked: add a fence', 'think: around the barn', 'say: Fencing it.', 'status: streaming'],
    ])
  })

  it('orders runs by their first item, keeps runs without a prompt, and a replaced message keeps its place', () => {
    const runs = timeline({
      // The prompt of s2 arrived after s0's first message; s0 has none (the steward started it).
      prompts: [prompt(2, 's2', 'cat', 'a title')],
      chat: [say(1, 's0', 'woke up'), { ...say(3, 's2', 'Title added.'), n: 3 }],
      thoughts: [],
      sessions: {},
    })
    expect(runs.map((r) => [r.sessionId, r.prompt?.asker ?? null, r.status])).toEqual([
      ['s0', null, null],
      ['s2', 'cat', null],
    ])
    expect(runs[1]!.entries).toHaveLength(1)
  })

  it('offers "show" only when some of what a run drew is outside the view', () => {
    const view = { x: 0, y: 0, w: 1000, h: 800 }
    expect(unionBox([])).toBeNull()
    expect(unionBox([{ x: 10, y: 10, w: 10, h: 10 }, null, { x: 100, y: -50, w: 20, h: 20 }])).toEqual({ x: 10, y: -50, w: 110, h: 70 })
    expect(outOfView(view, null)).toBe(false)
    expect(outOfView(view, { x: 100, y: 100, w: 200, h: 200 })).toBe(false)
    expect(outOfView(view, { x: 900, y: 100, w: 200, h: 200 })).toBe(true)
    expect(outOfView(view, { x: 3000, y: 3000, w: 10, h: 10 })).toBe(true)
  })
})
