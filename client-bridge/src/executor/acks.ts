// Delayed cumulative acks: what this tab applied within ACK_DELAY_MS of the first ack of a
// quiet spell leaves as ONE ack per session (always one at the end of a burst).
import { ACK_DELAY_MS, MAX_ACKED_IDS } from '../protocol.gen'
import type { Ack } from '../protocol.gen'

/**
 * One ack for both. Envelopes are applied in seq order and duplicates lie below the last
 * applied, so the highest seq of the two has every envelope before it applied: cumulative.
 */
export const mergeAck = (prev: Ack, ack: Ack): Ack => ({
  ...ack,
  seq: Math.max(prev.seq, ack.seq),
  applied: [...prev.applied, ...ack.applied],
  cumulative: true,
})

/** Holds acks per session (merged, under MAX_ACKED_IDS ids each) and sends them together. */
export class AckHolder {
  private held = new Map<string, Ack>()

  constructor(private readonly send: (ack: Ack) => void) {}

  add(ack: Ack) {
    let prev = this.held.get(ack.sessionId)
    if (prev && prev.applied.length + ack.applied.length > MAX_ACKED_IDS) {
      this.send(prev)
      prev = undefined
    }
    this.held.set(ack.sessionId, prev ? mergeAck(prev, ack) : ack)
  }

  flush() {
    const held = [...this.held.values()]
    this.held.clear()
    for (const ack of held) this.send(ack)
  }
}

/**
 * The tab's ack sender: an ack waits at most `delayMs` (the steward's retransmit timeout
 * exceeds it), then everything held leaves at once.
 */
export class DelayedAcks {
  private readonly holder: AckHolder
  private timer: ReturnType<typeof setTimeout> | null = null

  constructor(send: (ack: Ack) => void, private readonly delayMs: number = ACK_DELAY_MS) {
    this.holder = new AckHolder(send)
  }

  add(ack: Ack) {
    this.holder.add(ack)
    this.timer ??= setTimeout(() => this.flush(), this.delayMs)
  }

  flush() {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    this.holder.flush()
  }
}
