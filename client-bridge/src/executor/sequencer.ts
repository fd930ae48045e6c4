// Seq order per session: envelopes apply strictly in order; a gap is held in a buffer until
// a retransmit or a resync fills it. A session's final status names its last seq, so missing
// trailing envelopes are a gap too. Knows nothing about the editor.
import type { ActionEnvelope } from '../protocol.gen'
import type { ReloadMemory } from './memory'

export interface SequencerHooks {
  apply(env: ActionEnvelope): void
  duplicate(env: ActionEnvelope): void
  requestResync(sessionId: string, lastSeq: number): void
}

// A gap still open after this long asks again.
const RESYNC_RETRY_MS = 1500
// Held envelopes per session; beyond that the oldest wait for the resync instead.
const MAX_BUFFERED = 2000

export class Sequencer {
  private buffers = new Map<string, Map<number, ActionEnvelope>>()
  private askedAt = new Map<string, { lastSeq: number; at: number }>()
  // The last seq a session's final status announced, while this tab is short of it.
  private expected = new Map<string, number>()

  constructor(
    private readonly memory: ReloadMemory,
    private readonly hooks: SequencerHooks,
    private readonly now: () => number = () => Date.now(),
    /** `sharedDocument` (host mode): the document comes through the app's own sync, so a
     * session this tab first sees part-way (a new host continuing a run) was applied up to
     * there by the previous host, and a session it never saw needs nothing from it. */
    private readonly opts: { sharedDocument?: boolean } = {},
  ) {}

  /** Sessions this tab took over part-way (their earlier envelopes were another host's). */
  readonly adopted = new Set<string>()

  private known(sessionId: string): boolean {
    return Object.hasOwn(this.memory.state.sessions, sessionId)
  }

  push(env: ActionEnvelope): 'applied' | 'duplicate' | 'buffered' {
    const adopt = this.opts.sharedDocument === true && !this.known(env.sessionId)
    const ledger = this.memory.session(env.sessionId)
    if (adopt && env.seq > 1) {
      ledger.lastSeq = env.seq - 1
      this.adopted.add(env.sessionId)
    }
    if (env.seq <= ledger.lastSeq) {
      this.hooks.duplicate(env)
      return 'duplicate'
    }
    if (env.seq > ledger.lastSeq + 1) {
      const buf = this.buffers.get(env.sessionId) ?? new Map<number, ActionEnvelope>()
      if (buf.size < MAX_BUFFERED || buf.has(env.seq)) buf.set(env.seq, env)
      this.buffers.set(env.sessionId, buf)
      this.askForGap(env.sessionId, ledger.lastSeq)
      return 'buffered'
    }
    this.hooks.apply(env)
    ledger.lastSeq = env.seq
    this.drain(env.sessionId)
    return 'applied'
  }

  private drain(sessionId: string) {
    const buf = this.buffers.get(sessionId)
    if (!buf) return
    const ledger = this.memory.session(sessionId)
    for (;;) {
      // Drop anything a resync already covered.
      for (const seq of [...buf.keys()]) if (seq <= ledger.lastSeq) buf.delete(seq)
      const next = buf.get(ledger.lastSeq + 1)
      if (!next) break
      buf.delete(next.seq)
      this.hooks.apply(next)
      ledger.lastSeq = next.seq
    }
    if (buf.size === 0) {
      this.buffers.delete(sessionId)
      if (!this.short(sessionId)) this.askedAt.delete(sessionId)
    }
  }

  private short(sessionId: string): boolean {
    const want = this.expected.get(sessionId)
    if (want === undefined) return false
    if (this.memory.session(sessionId).lastSeq >= want) {
      this.expected.delete(sessionId)
      return false
    }
    return true
  }

  /** The session ended at `lastSeq` (its final status): what is missing is asked for by the
   *  retry timer, after a retransmit had its chance. */
  expect(sessionId: string, lastSeq: number) {
    if (this.opts.sharedDocument && !this.known(sessionId)) return
    if (this.memory.session(sessionId).lastSeq >= lastSeq) return
    this.expected.set(sessionId, Math.max(lastSeq, this.expected.get(sessionId) ?? 0))
    // As if asked now: the first request goes out after RESYNC_RETRY_MS without progress.
    if (!this.askedAt.has(sessionId)) this.askedAt.set(sessionId, { lastSeq: this.memory.session(sessionId).lastSeq, at: this.now() })
  }

  private askForGap(sessionId: string, lastSeq: number) {
    const asked = this.askedAt.get(sessionId)
    const t = this.now()
    if (asked && asked.lastSeq === lastSeq && t - asked.at < RESYNC_RETRY_MS) return
    this.askedAt.set(sessionId, { lastSeq, at: t })
    this.hooks.requestResync(sessionId, lastSeq)
  }

  /** Sessions with an open gap (for the retry timer). */
  gaps(): Array<[string, number]> {
    const open = new Set([...this.buffers.keys(), ...[...this.expected.keys()].filter((sid) => this.short(sid))])
    return [...open].map((sid) => [sid, this.memory.session(sid).lastSeq])
  }

  retryGaps() {
    for (const [sid, lastSeq] of this.gaps()) this.askForGap(sid, lastSeq)
  }

  /** After a reconnect or a join: ask for everything after what this tab applied. */
  resyncAll() {
    for (const [sid, lastSeq] of this.memory.knownSessions()) {
      this.askedAt.set(sid, { lastSeq, at: this.now() })
      this.hooks.requestResync(sid, lastSeq)
    }
  }
}
