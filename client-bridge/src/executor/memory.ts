// What a tab must remember across a page reload to apply every action exactly once:
// per session the last applied seq and the finished action ids, the undo diffs of in-flight
// partial actions, unfinished fragments and (relay mode) the document itself. All of it is
// written in ONE storage item, so the ledger and the document can never disagree.
export interface SessionLedger {
  lastSeq: number
  done: string[]
}

export interface MemoryState {
  v: 1
  sessions: Record<string, SessionLedger>
  partials: Record<string, unknown>
  fragments: Record<string, string[]>
  document?: unknown
}

// Finished ids kept per session; older ones are covered by `lastSeq` anyway.
const MAX_DONE_IDS = 5000

const empty = (): MemoryState => ({ v: 1, sessions: {}, partials: {}, fragments: {} })

export class ReloadMemory {
  state: MemoryState
  private doneSets = new Map<string, Set<string>>()
  private timer: ReturnType<typeof setTimeout> | null = null

  constructor(
    private readonly storage: Storage | null,
    private readonly key: string,
    private readonly snapshotDocument: (() => unknown) | null = null,
    private readonly saveDelayMs = 250,
  ) {
    this.state = this.load()
  }

  private load(): MemoryState {
    try {
      const raw = this.storage?.getItem(this.key)
      if (!raw) return empty()
      const parsed = JSON.parse(raw) as MemoryState
      return parsed && parsed.v === 1 ? { ...empty(), ...parsed } : empty()
    } catch {
      return empty()
    }
  }

  session(sessionId: string): SessionLedger {
    return (this.state.sessions[sessionId] ??= { lastSeq: 0, done: [] })
  }

  knownSessions(): Array<[string, number]> {
    return Object.entries(this.state.sessions).map(([sid, s]) => [sid, s.lastSeq])
  }

  isDone(sessionId: string, actionId: string): boolean {
    let set = this.doneSets.get(sessionId)
    if (!set) {
      set = new Set(this.session(sessionId).done)
      this.doneSets.set(sessionId, set)
    }
    return set.has(actionId)
  }

  markDone(sessionId: string, actionId: string) {
    if (this.isDone(sessionId, actionId)) return
    const ledger = this.session(sessionId)
    ledger.done.push(actionId)
    this.doneSets.get(sessionId)?.add(actionId)
    if (ledger.done.length > MAX_DONE_IDS) {
      const dropped = ledger.done.splice(0, ledger.done.length - MAX_DONE_IDS)
      for (const id of dropped) this.doneSets.get(sessionId)?.delete(id)
    }
  }

  /** Schedule a write; several changes within the delay share one write. */
  touch() {
    if (!this.storage || this.timer) return
    this.timer = setTimeout(() => {
      this.timer = null
      this.saveNow()
    }, this.saveDelayMs)
  }

  saveNow() {
    if (!this.storage) return
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = null
    }
    if (this.snapshotDocument) this.state.document = this.snapshotDocument()
    try {
      this.storage.setItem(this.key, JSON.stringify(this.state))
    } catch (err) {
      console.warn('[steward] could not save reload memory', err)
    }
  }

  dispose() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }
}
