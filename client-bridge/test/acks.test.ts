import { afterEach, describe, expect, it, vi } from 'vitest'
import { DelayedAcks } from '../src/executor/acks'
import { ACK_DELAY_MS, MAX_ACKED_IDS } from '../src/protocol.gen'
import type { Ack } from '../src/protocol.gen'

const ack = (sessionId: string, seq: number, applied = [`a${seq}`]): Ack => ({ sessionId, seq, applied, appliedAt: seq })

describe('delayed acks', () => {
  afterEach(() => vi.useRealTimers())

  it('sends one cumulative ack per session once the delay is up, and one after every burst', () => {
    vi.useFakeTimers()
    const sent: Ack[] = []
    const acks = new DelayedAcks((a) => sent.push(a))
    acks.add(ack('s', 1))
    acks.add(ack('t', 1))
    vi.advanceTimersByTime(ACK_DELAY_MS / 2)
    acks.add(ack('s', 2))
    expect(sent).toEqual([]) // held: nothing leaves before the delay
    vi.advanceTimersByTime(ACK_DELAY_MS / 2)
    expect(sent.map((a) => [a.sessionId, a.seq, a.cumulative ?? false, a.applied])).toEqual([
      ['s', 2, true, ['a1', 'a2']],
      ['t', 1, false, ['a1']],
    ])
    acks.add(ack('s', 3)) // the next burst arms a new delay
    vi.advanceTimersByTime(ACK_DELAY_MS)
    expect(sent.slice(2).map((a) => [a.seq, a.cumulative ?? false])).toEqual([[3, false]])
    vi.advanceTimersByTime(10 * ACK_DELAY_MS)
    expect(sent).toHaveLength(3) // nothing held: nothing more sent
  })

  it('starts another ack past MAX_ACKED_IDS ids and sends what is held on flush', () => {
    vi.useFakeTimers()
    const sent: Ack[] = []
    const acks = new DelayedAcks((a) => sent.push(a))
    const ids = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`)
    acks.add(ack('s', 1, ids(MAX_ACKED_IDS - 1, 'x')))
    acks.add(ack('s', 2, ids(2, 'y'))) // would overflow: the first leaves at once
    expect(sent.map((a) => [a.seq, a.applied.length])).toEqual([[1, MAX_ACKED_IDS - 1]])
    acks.flush()
    expect(sent.map((a) => [a.seq, a.applied.length])).toEqual([[1, MAX_ACKED_IDS - 1], [2, 2]])
  })
})
