// The fairies a user picks in the panel: the order picked, a toggle taking one out, a dismissed
// fairy's pick dropping out (and not coming back with a later fairy given its id), the sentence
// above Send, and the crew list's toggles (pressed, numbered, a click picks).
import { act, createElement } from 'react'
import { createRoot } from 'react-dom/client'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { FairyPresence } from '../src/protocol.gen'
import type { StewardHandle } from '../src/steward'
import { CrewList } from '../src/ui/CrewList'
import { busyPicks, livePicks, pickSentence, togglePick, usePicks, type PickState } from '../src/ui/picks'

const fairy = (id: string, name: string, mode = 'idling'): FairyPresence => ({ id, name, color: 'violet', mode, position: { x: 0, y: 0 } })
const CREW = [fairy('fairy-1', 'Bramble'), fairy('fairy-2', 'Clover'), fairy('fairy-3', 'Moss'), fairy('fairy-4', 'Wisp')]

describe('pick state', () => {
  it('adds a fairy last and takes one out, the others keeping their order', () => {
    let picks = togglePick([], 'fairy-3')
    picks = togglePick(picks, 'fairy-1')
    picks = togglePick(picks, 'fairy-2')
    expect(picks).toEqual(['fairy-3', 'fairy-1', 'fairy-2'])
    picks = togglePick(picks, 'fairy-1')
    expect(picks).toEqual(['fairy-3', 'fairy-2'])
    expect(togglePick(picks, 'fairy-1')).toEqual(['fairy-3', 'fairy-2', 'fairy-1'])
  })

  it('drops the picks of fairies no longer in the crew', () => {
    expect(livePicks(['fairy-2', 'fairy-9', 'fairy-1'], CREW)).toEqual(['fairy-2', 'fairy-1'])
    expect(livePicks(['fairy-2'], [])).toEqual([])
  })

  it('names the busy picks', () => {
    const crew = [fairy('fairy-1', 'Bramble'), fairy('fairy-2', 'Clover', 'working-drone'), fairy('fairy-3', 'Moss', 'sleeping')]
    expect(busyPicks(['fairy-3', 'fairy-2', 'fairy-1'], crew)).toEqual(['Clover'])
    expect(busyPicks([], crew)).toEqual([])
  })
})

describe('the sentence above Send', () => {
  it('says who works the prompt and how, by the names the crew shows', () => {
    expect(pickSentence([], CREW)).toBe('No fairy picked: the steward chooses who works it.')
    expect(pickSentence(['fairy-1'], CREW)).toBe('Bramble works it solo.')
    expect(pickSentence(['fairy-1', 'fairy-2'], CREW)).toBe('Bramble leads, Clover draws with it.')
    expect(pickSentence(['fairy-2', 'fairy-1'], CREW)).toBe('Clover leads, Bramble draws with it.')
    expect(pickSentence(['fairy-1', 'fairy-2', 'fairy-3'], CREW)).toBe('Bramble leads a project with Clover and Moss.')
    expect(pickSentence(['fairy-4', 'fairy-1', 'fairy-2', 'fairy-3'], CREW)).toBe('Wisp leads a project with Bramble, Clover and Moss.')
  })

  it('leaves out a pick of a fairy that left the crew', () => {
    expect(pickSentence(['fairy-9', 'fairy-2'], CREW)).toBe('Clover works it solo.')
    expect(pickSentence(['fairy-9'], CREW)).toBe('No fairy picked: the steward chooses who works it.')
  })
})

describe('usePicks and the crew list', () => {
  beforeAll(() => {
    ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
  })
  let unmount: (() => Promise<void>) | null = null
  afterEach(async () => {
    await unmount?.()
    unmount = null
  })

  function mount() {
    const host = document.createElement('div')
    const root = createRoot(host)
    unmount = () => act(async () => root.unmount())
    let latest: PickState | null = null
    const flown: string[] = []
    const handle = { flyTo: (f: FairyPresence) => flown.push(f.id) } as unknown as StewardHandle
    const Probe = ({ fairies }: { fairies: FairyPresence[] }) => {
      const picking = usePicks(fairies)
      latest = picking
      return createElement(CrewList, { handle, fairies, following: null, picks: picking.picks, onPick: picking.toggle })
    }
    const render = (fairies: FairyPresence[]) => act(async () => root.render(createElement(Probe, { fairies })))
    const toggles = () => [...host.querySelectorAll<HTMLButtonElement>('[data-testid=crew-pick]')]
    const click = (el: HTMLElement) => act(async () => el.click())
    return { render, toggles, click, host, flown, picks: () => latest!.picks, clear: () => act(async () => latest!.clear()) }
  }

  it('picks by clicking a fairy, shows the order, unpicks and clears', async () => {
    const ui = mount()
    await ui.render(CREW)
    expect(ui.toggles().map((b) => b.getAttribute('aria-pressed'))).toEqual(['false', 'false', 'false', 'false'])
    await ui.click(ui.toggles()[2]!)
    await ui.click(ui.toggles()[0]!)
    expect(ui.picks()).toEqual(['fairy-3', 'fairy-1'])
    expect(ui.toggles().map((b) => [b.getAttribute('aria-pressed'), b.dataset.order ?? null])).toEqual([
      ['true', '2'],
      ['false', null],
      ['true', '1'],
      ['false', null],
    ])
    expect(ui.toggles()[0]!.getAttribute('aria-label')).toBe('Pick Bramble (picked 2)')
    await ui.click(ui.toggles()[2]!) // Moss out: Bramble is first now
    expect(ui.picks()).toEqual(['fairy-1'])
    expect(ui.toggles()[0]!.dataset.order).toBe('1')
    await ui.clear()
    expect(ui.picks()).toEqual([])
    // With picking on, flying the camera to a fairy is a button of its own.
    await ui.click(ui.host.querySelector<HTMLButtonElement>('[data-testid=crew-fly]')!)
    expect(ui.flown).toEqual(['fairy-1'])
    expect(ui.picks()).toEqual([])
  })

  it('drops a dismissed fairy’s pick for good; a busy fairy stays picked', async () => {
    const ui = mount()
    await ui.render(CREW)
    for (const i of [1, 3, 0]) await ui.click(ui.toggles()[i]!)
    expect(ui.picks()).toEqual(['fairy-2', 'fairy-4', 'fairy-1'])
    await ui.render(CREW.filter((f) => f.id !== 'fairy-4').map((f) => (f.id === 'fairy-2' ? { ...f, mode: 'working-drone' } : f)))
    expect(ui.picks()).toEqual(['fairy-2', 'fairy-1'])
    // A fairy summoned later with the dismissed one's id is not picked.
    await ui.render([...CREW.slice(0, 3), fairy('fairy-4', 'Fennel')])
    expect(ui.picks()).toEqual(['fairy-2', 'fairy-1'])
    expect(ui.toggles()[3]!.getAttribute('aria-pressed')).toBe('false')
  })

  it('without onPick a click on a fairy flies the camera to it', async () => {
    const host = document.createElement('div')
    const root = createRoot(host)
    unmount = () => act(async () => root.unmount())
    const flown: string[] = []
    const handle = { flyTo: (f: FairyPresence) => flown.push(f.id) } as unknown as StewardHandle
    await act(async () => root.render(createElement(CrewList, { handle, fairies: CREW, following: null })))
    expect(host.querySelector('[data-testid=crew-pick]')).toBeNull()
    await act(async () => host.querySelector<HTMLButtonElement>('.crew-name')!.click())
    expect(flown).toEqual(['fairy-1'])
  })
})
