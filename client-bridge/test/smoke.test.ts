import { describe, expect, it } from 'vitest'
import { env, geo, makeRig, page } from './harness'

describe('smoke', () => {
  it('creates a geo shape', () => {
    const rig = makeRig()
    rig.executor.receive(env('s1', 1, [geo('box1', 100, 80, 200, 100, { text: 'Sign up' })]))
    const p = page(rig.editor)
    expect(p.box1).toMatchObject({ id: 'box1', type: 'geo', x: 100, y: 80, props: { w: 200, h: 100, text: 'Sign up' } })
    expect(rig.acks).toHaveLength(1)
  })
})
