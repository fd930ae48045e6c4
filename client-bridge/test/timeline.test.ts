import { describe, expect, it } from 'vitest'
import type { StatusMessage } from '../src/protocol.gen'
import { outOfView, timeline, unionBox, type ChatItem, type PromptItem, type Run, type ThoughtItem } from '../src/ui/timeline'

const prompt = (n: number, sessionId: string, asker: string, text: string, extra: Partial<PromptItem> = {}): PromptItem => ({ n, sessionId, asker, source: 'browser', text, ts: n, ...extra })
const say = (n: number, sessionId: string, text: string, fairy?: string): ChatItem => ({ n, id: `m${n}`, sessionId, role: 'assistant', text, ts: n, fairy })
const think = (n: number, sessionId: string, text: string, fairy?: string): ThoughtItem => ({ n, sessionId, kind: 'think', text, ts: n, fairy })
const status = (sessionId: string, s: StatusMessage['status']): StatusMessage => ({ sessionId, status: s, ts: 0 })

// A card as lines: the prompt, then each entry ("say:" a message with its speaker when named,
// "think:" a run's folded thoughts), then its status.
const lines = (run: Run) => [
  ...(run.prompt ? [`${run.prompt.asker} asked: ${run.prompt.text}`] : []),
  ...run.entries.map((e) =>
    e.kind === 'message' ? `say: ${e.speaker ? `${e.speaker}: ` : ''}${e.message.text}` : `think${e.fairy ? ` ${e.fairy}` : ''}: ${e.thoughts.map((t) => t.text).join(' | ')}`,
  ),
  `status: ${run.status?.status ?? '-'}`,
]

describe('the chat panel timeline', () => {
  it('shows each prompt with who asked, then its messages in the room order, its thoughts folded into one row, then its status', () => {
    // Two runs overlapping in time: their items arrive interleaved.
    const runs = timeline({
      prompts: [prompt(1, 's1', 'ann', 'draw a barn'), prompt(4, 's2', 'bob', 'add a fence')],
      chat: [say(3, 's1', 'Drawing a barn.'), say(6, 's2', 'Fencing it.'), say(9, 's1', 'Done: a red barn.')],
      thoughts: [think(2, 's1', 'walls first'), think(5, 's2', 'around the barn'), think(7, 's1', 'then the roof'), think(8, 's1', 'and a door')],
      sessions: { s1: status('s1', 'done'), s2: status('s2', 'streaming') },
    })
    expect(runs.map(lines)).toEqual([
      ['ann asked: draw a barn', 'think: walls first | then the roof | and a door', 'say: Drawing a barn.', 'say: Done: a red barn.', 'status: done'],
      ['bob asked: add a fence', 'think: around the barn', 'say: Fencing it.', 'status: streaming'],
    ])
  })

  it('orders by the room order whatever order items reached this tab in, so every tab shows the same', () => {
    const items = {
      prompts: [prompt(1, 's1', 'ann', 'a title'), prompt(3, 's2', 'bob', 'a box')],
      chat: [say(2, 's1', 'Title added.'), say(4, 's2', 'Box added.'), say(5, 's1', 'Also underlined.')],
      thoughts: [think(6, 's2', 'nothing else')],
      sessions: {},
    }
    const live = timeline(items)
    // A late tab gets the same items loaded in another order (pages, then live packets).
    const late = timeline({ prompts: [...items.prompts].reverse(), chat: [...items.chat].reverse(), thoughts: items.thoughts, sessions: {} })
    expect(late.map(lines)).toEqual(live.map(lines))
    expect(live.map((r) => r.sessionId)).toEqual(['s1', 's2'])
  })

  it("groups a project's fairies' runs under its prompt in time order, names each fairy once per turn, and strips a name the model wrote itself", () => {
    const names = { f1: 'Clover', f2: 'Moss', lead: 'Willow' }
    const runs = timeline({
      prompts: [prompt(1, 'p', 'ann', 'project: a farm'), prompt(5, 'other', 'bob', 'a title')],
      chat: [
        say(2, 'p', 'Planning the farm.', 'lead'),
        say(4, 'd1', 'Clover: Drawing the barn.', 'f1'), // the name written by the model too
        say(6, 'd2', 'Fencing.', 'f2'),
        say(7, 'd2', 'Fence done.', 'f2'),
        say(8, 'other', 'Title added.'),
        say(9, 'p', "It's finished.", 'lead'),
      ],
      thoughts: [think(3, 'd1', 'barn left', 'f1'), think(10, 'd1', 'roof red', 'f1')],
      sessions: { p: status('p', 'done'), d1: { ...status('d1', 'done'), fairy: 'f1' }, d2: { ...status('d2', 'done'), fairy: 'f2' } },
      projects: [{ sessionId: 'p', lead: 'lead', members: ['f1', 'f2'] }],
      names,
    })
    expect(runs.map(lines)).toEqual([
      [
        'ann asked: project: a farm',
        'say: lead: Planning the farm.',
        'think f1: barn left | roof red',
        'say: f1: Drawing the barn.',
        'say: f2: Fencing.',
        'say: Fence done.', // the same fairy again: named once
        "say: lead: It's finished.", // the lead's closing message after its drones', as it came
        'status: done',
      ],
      ['bob asked: a title', 'say: Title added.', 'status: -'],
    ])
    expect(runs[0]!.sessions).toEqual(['p', 'd1', 'd2'])
  })

  it('puts a fairy run with no known project under the latest prompt before it, never under an undo', () => {
    const runs = timeline({
      prompts: [prompt(1, 'p', 'ann', 'project: a farm'), prompt(3, 'u', 'ann', 'undo', { reverts: 'x' })],
      chat: [say(2, 'p', 'Planning.'), say(4, 'u', 'Took back "a title".'), say(5, 'd1', 'Barn drawn.', 'f1')],
      thoughts: [],
      sessions: {},
    })
    expect(runs.map((r) => [r.sessionId, r.sessions])).toEqual([
      ['p', ['p', 'd1']],
      ['u', ['u']],
    ])
    // With nothing before it, a fairy's run is a card of its own.
    expect(timeline({ prompts: [], chat: [say(1, 'd', 'woke up', 'f1')], thoughts: [], sessions: {} }).map((r) => [r.sessionId, r.prompt])).toEqual([['d', null]])
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
