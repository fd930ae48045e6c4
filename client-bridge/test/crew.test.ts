// The crew and project state a tab keeps: the newest state of each project in its place, late
// states dropped, bad messages ignored; the camera's target for a task or a fairy; the RPCs.
import { describe, expect, it } from 'vitest'
import { crewApi, focusBox, withProject } from '../src/crew'
import type { FairyPresence, ProjectState } from '../src/protocol.gen'

const state = (projectId: string, ts: number, status: ProjectState['status'] = 'active'): ProjectState => ({
  projectId,
  title: `P ${projectId}`,
  kind: 'orchestrated',
  status,
  lead: 'fairy-1',
  tasks: [{ id: 't1', title: 'Barn', status: ts > 1 ? 'done' : 'in-progress', owner: 'fairy-2', area: { x: 0, y: 0, w: 10, h: 10 } }],
  ts,
})

describe('project states', () => {
  it('replaces a project in place, drops a late older state and ignores junk', () => {
    let ps = withProject([], state('a', 1))
    ps = withProject(ps, state('b', 1))
    ps = withProject(ps, state('a', 2, 'done'))
    expect(ps.map((p) => [p.projectId, p.status])).toEqual([['a', 'done'], ['b', 'active']])
    expect(withProject(ps, state('a', 1))).toBe(ps)
    expect(withProject(ps, { projectId: 3 })).toBe(ps)
    expect(withProject(ps, null)).toBe(ps)
  })
})

describe('focus', () => {
  it('flies to a task area, a fairy task area, or around a fairy', () => {
    expect(focusBox({ area: { x: 1, y: 2, w: 3, h: 4 } })).toEqual({ x: 1, y: 2, w: 3, h: 4 })
    expect(focusBox({ area: null })).toBeNull()
    const fairy: FairyPresence = { id: 'f', name: 'F', color: 'red', mode: 'idling', position: { x: 500, y: 400 } }
    expect(focusBox(fairy)).toEqual({ x: 300, y: 250, w: 400, h: 300 })
    expect(focusBox({ ...fairy, taskBounds: { x: 0, y: 0, w: 9, h: 9 } })).toEqual({ x: 0, y: 0, w: 9, h: 9 })
  })
})

describe('crew api', () => {
  it('calls the steward methods with the request and reads an abort reply safely', async () => {
    const calls: Array<[string, unknown]> = []
    const api = crewApi(async <T,>(method: string, payload: unknown) => {
      calls.push([method, payload])
      return (method === 'steward.abort' ? { error: 'nope' } : { fairy: null }) as T
    })
    await api.summon({ name: 'Wisp', color: 'red' })
    await api.rename('fairy-4', 'Moth')
    await api.dismiss('fairy-4')
    expect(await api.abort('p1')).toEqual({ ok: false, error: 'nope' })
    await api.revertProject('p1')
    expect(calls).toEqual([
      ['steward.summon', { name: 'Wisp', color: 'red' }],
      ['steward.rename', { fairyId: 'fairy-4', name: 'Moth' }],
      ['steward.dismiss', { fairyId: 'fairy-4' }],
      ['steward.abort', { projectId: 'p1' }],
      ['steward.revert_project', { projectId: 'p1' }],
    ])
  })
})
