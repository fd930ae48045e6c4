// The panel's picker wired to Send: picks made by clicking the crew list go out as `fairies`
// in the order picked (none picked: no `fairies`), the sentence above Send follows the picks,
// and when the steward refuses the run it started (a busy fairy) its reason shows under the
// prompt box, until the user picks again.
import { act, createElement } from 'react'
import { createRoot } from 'react-dom/client'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { FairyPresence, PromptReply, PromptRequest } from '../src/protocol.gen'
import { initialState, type StewardHandle, type StewardState } from '../src/steward'
import { StewardPanel } from '../src/ui/StewardPanel'
import { makeEditor } from './harness'

const fairy = (id: string, name: string, mode = 'idling'): FairyPresence => ({ id, name, color: 'violet', mode, position: { x: 0, y: 0 } })

/** A handle whose state the test sets and whose prompts it records. */
function stubHandle() {
  let state: StewardState = {
    ...initialState('connected', true),
    isHost: true,
    host: 'me',
    fairies: [fairy('fairy-1', 'Bramble'), fairy('fairy-2', 'Clover'), fairy('fairy-3', 'Moss', 'drawing')],
  }
  const listeners = new Set<(s: StewardState) => void>()
  const prompts: Array<[string, Omit<PromptRequest, 'message'> | undefined]> = []
  let n = 0
  const handle = {
    get state() {
      return state
    },
    editor: makeEditor(),
    subscribe(l: (s: StewardState) => void) {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    async prompt(message: string, extra?: Omit<PromptRequest, 'message'>): Promise<PromptReply> {
      prompts.push([message, extra])
      return { sessionId: `s${++n}` }
    },
    composing: () => true,
    runBounds: () => null,
  } as unknown as StewardHandle
  const set = (patch: Partial<StewardState>) => {
    state = { ...state, ...patch }
    for (const l of listeners) l(state)
  }
  return { handle, prompts, set }
}

describe('the panel sends its picks', () => {
  beforeAll(() => {
    ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
    // jsdom lays nothing out: the panel's scroll to its newest message has nowhere to go.
    Element.prototype.scrollIntoView ??= () => {}
  })
  let unmount: (() => Promise<void>) | null = null
  afterEach(async () => {
    await unmount?.()
    unmount = null
  })

  async function mount() {
    const stub = stubHandle()
    const host = document.createElement('div')
    document.body.appendChild(host)
    const root = createRoot(host)
    unmount = () => act(async () => root.unmount())
    await act(async () => root.render(createElement(StewardPanel, { handle: stub.handle, identity: 'me' })))
    const q = (sel: string) => host.querySelector<HTMLElement>(sel)
    const click = (sel: string) => act(async () => q(sel)!.click())
    const send = async (text: string) => {
      const box = q('[data-testid=prompt]') as HTMLTextAreaElement
      // React reads a textarea's value through its own setter.
      const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!
      await act(async () => {
        setValue.call(box, text)
        box.dispatchEvent(new Event('input', { bubbles: true }))
      })
      await click('[data-testid=send]')
    }
    const pick = (id: string) => click(`[data-fairy=${id}] [data-testid=crew-pick]`)
    return { ...stub, q, click, send, pick }
  }

  it('sends the picks in the order clicked, and none when nothing is picked', async () => {
    const ui = await mount()
    expect(ui.q('[data-testid=picks-sentence]')!.textContent).toBe('No fairy picked: the steward chooses who works it.')
    await ui.send('draw a cat')
    await ui.pick('fairy-2')
    await ui.pick('fairy-1')
    expect(ui.q('[data-testid=picks-sentence]')!.textContent).toBe('Clover leads, Bramble draws with it.')
    await ui.send('draw a garden')
    await ui.pick('fairy-3')
    expect(ui.q('[data-testid=picks-sentence]')!.textContent).toBe('Clover leads a project with Bramble and Moss.')
    expect(ui.q('[data-testid=picks-busy]')!.textContent).toBe('Busy now: Moss')
    await ui.send('draw a street')
    await ui.click('[data-testid=picks-clear]')
    expect(ui.q('[data-testid=picks-clear]')).toBeNull()
    expect(ui.prompts).toEqual([
      ['draw a cat', {}],
      ['draw a garden', { fairies: ['fairy-2', 'fairy-1'] }],
      ['draw a street', { fairies: ['fairy-2', 'fairy-1', 'fairy-3'] }],
    ])
  })

  it('shows the steward’s reason when it refuses the run, until the next pick', async () => {
    const ui = await mount()
    await ui.pick('fairy-3')
    await ui.send('draw a boat')
    expect(ui.q('[data-testid=prompt-error]')).toBeNull()
    const reason = 'Moss is busy. Pick a free fairy, or ask again when it is done.'
    await act(async () => ui.set({ sessions: { s1: { sessionId: 's1', status: 'error', detail: `error: ${reason}`, ts: 1 } }, activeSession: 's1' }))
    expect(ui.q('[data-testid=prompt-error]')!.textContent).toBe(reason)
    expect(ui.q('[data-testid=status]')).toBeNull() // said once, under the prompt box
    await ui.pick('fairy-1')
    expect(ui.q('[data-testid=prompt-error]')).toBeNull()
  })

  it('says what a run is doing in plain words, the protocol’s word kept in data-state', async () => {
    const ui = await mount()
    await ui.send('draw a boat')
    await act(async () => ui.set({ sessions: { s1: { sessionId: 's1', status: 'waiting_context', ts: 1 } }, activeSession: 's1' }))
    const line = ui.q('[data-testid=status]')!
    expect(line.getAttribute('data-state')).toBe('waiting_context')
    expect(line.textContent).toBe('looking at the canvas')
    await act(async () => ui.set({ sessions: { s1: { sessionId: 's1', status: 'calling_model', ts: 2 } } }))
    expect(ui.q('[data-testid=status]')!.textContent).toBe('thinking')
  })
})
