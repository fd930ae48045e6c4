import { describe, expect, it } from 'vitest'
import { envelopesIn } from '../src/executor/packets'
import { TOPIC_ACTION, TOPIC_ACTIONS } from '../src/protocol.gen'
import { env, geo, makeRig, page } from './harness'

// An update of a's x: what the steward sends for a move (layout is worked out on its mirror).
const moveTo = (id: string, x: number) => ({ name: 'update_shape' as const, id, params: { id: 'a', x } })

describe('steward packets: one envelope or a batch', () => {
  it('unpacks a batch in send order and acks it once per session, cumulatively', () => {
    const rig = makeRig()
    const batch = { envelopes: [env('s', 1, [geo('a', 0, 0)]), env('t', 1, [moveTo('m1', 10)], true), env('s', 2, [moveTo('m2', 15)])] }
    const wire = JSON.parse(JSON.stringify(batch)) as unknown
    const envelopes = envelopesIn(TOPIC_ACTIONS, wire)
    expect(envelopes?.map((e) => [e.sessionId, e.seq])).toEqual([['s', 1], ['t', 1], ['s', 2]])
    rig.executor.receiveAll(envelopes ?? [])
    expect(page(rig.editor).a!.x).toBe(15)
    expect(rig.acks.map((a) => [a.sessionId, a.seq, a.cumulative ?? false, a.applied])).toEqual([
      ['s', 2, true, ['c-a', 'm2']],
      ['t', 1, false, ['m1']],
    ])
  })

  it('a batch that arrives again is applied once and acked again', () => {
    const rig = makeRig()
    const batch = { envelopes: [env('s', 1, [geo('a', 0, 0)]), env('s', 2, [moveTo('m1', 10)])] }
    for (let i = 0; i < 2; i++) rig.executor.receiveAll(envelopesIn(TOPIC_ACTIONS, batch) ?? [])
    expect(page(rig.editor).a!.x).toBe(10)
    // the duplicate batch is acked again (the steward may have lost the ack), applied once
    expect(rig.acks.map((a) => [a.seq, a.cumulative, a.applied])).toEqual([
      [2, true, ['c-a', 'm1']],
      [2, true, ['c-a', 'm1']],
    ])
  })

  it('takes a lone envelope on agent:action and refuses malformed packets whole', () => {
    const one = env('s', 1, [geo('a', 0, 0)])
    expect(envelopesIn(TOPIC_ACTION, one)).toEqual([one])
    expect(envelopesIn(TOPIC_ACTION, { envelopes: [one] })).toBeNull()
    expect(envelopesIn(TOPIC_ACTIONS, one)).toBeNull()
    expect(envelopesIn(TOPIC_ACTIONS, { envelopes: [] })).toBeNull()
    expect(envelopesIn(TOPIC_ACTIONS, { envelopes: [one, { seq: 2 }] })).toBeNull()
    expect(envelopesIn(TOPIC_ACTIONS, null)).toBeNull()
    expect(envelopesIn('agent:chat', one)).toBeNull()
  })
})
