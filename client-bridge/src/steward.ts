// connectSteward: wires a tldraw Editor and a connected livekit-client Room to the steward.
// Connectors answer context requests and publish viewport/selection and (relay mode) the
// user's edits; executors apply the steward's action envelopes; the handle exposes the
// steward's status, fairies, todos and chat for the UI.
import { ConnectionState, RoomEvent, RpcError, type Participant, type RemoteParticipant, type Room } from 'livekit-client'
import { Box as TlBox, type Editor, type TLShapeId } from 'tldraw'
import { ComposingThrottle } from './connectors/composing'
import { answerContext, renderScreenshot, viewportBox } from './connectors/context'
import { pageEncoding } from './connectors/image-encoding'
import { ScreenshotCache } from './connectors/screenshot-cache'
import { EditTracker } from './connectors/edits'
import { publishViewport } from './connectors/viewport'
import { DelayedAcks } from './executor/acks'
import { Executor, type TodoItem } from './executor/executor'
import { ReloadMemory } from './executor/memory'
import { envelopesIn } from './executor/packets'
import { crewApi, focusBox, withProject, type CrewApi } from './crew'
import { electHost } from './host'
import { unionBox, type ChatItem, type PromptItem, type ThoughtItem } from './ui/timeline'
import {
  ATTR_CAPABILITIES,
  MAX_RPC_PAYLOAD_BYTES,
  RESYNC_ALL_SESSIONS,
  RPC_CANCEL,
  RPC_CONTEXT,
  RPC_CONVERSATION,
  RPC_PROMPT,
  RPC_REVERT,
  TOPIC_ACK,
  TOPIC_ACTION,
  TOPIC_ACTIONS,
  TOPIC_CHAT,
  TOPIC_COMPOSING,
  TOPIC_EDIT,
  TOPIC_FAIRIES,
  TOPIC_PROJECT,
  TOPIC_PROMPT,
  TOPIC_RESYNC,
  TOPIC_STATUS,
  TOPIC_THOUGHT,
  TOPIC_VIEWPORT,
  type Box,
  type CancelReply,
  type ChatMessage,
  type ContextRequest,
  type ConversationReply,
  type FairiesMessage,
  type FairyPresence,
  type ProjectState,
  type PromptNotice,
  type PromptReply,
  type PromptRequest,
  type RevertReply,
  type StatusMessage,
  type ThoughtMessage,
} from './protocol.gen'

export type ApplyMode = 'relay' | 'host'
export type ConnectionStatus = 'connecting' | 'connected' | 'reconnecting' | 'disconnected'

export interface StewardOptions {
  /** The steward's participant identity (default `canvas-steward`). */
  stewardIdentity?: string
  /** `relay` (default): every browser applies, user edits go through the steward. */
  mode?: ApplyMode
  /** Where reload memory lives; default `sessionStorage` (null disables it). */
  storage?: Storage | null
  /** Storage key; default `steward:<room name>`. */
  memoryKey?: string
  /** Keep the document in reload memory (default: true in relay mode). */
  persistDocument?: boolean
  /** RPC timeout for prompt/cancel in ms (livekit's minimum is 8000). */
  rpcTimeoutMs?: number
  log?: (msg: string, extra?: unknown) => void
}

export type { ChatItem, PromptItem, ThoughtItem } from './ui/timeline'

export interface StewardState {
  status: ConnectionStatus
  isHost: boolean
  host: string | null
  stewardPresent: boolean
  /** Latest status per session. */
  sessions: Record<string, StatusMessage>
  /** The session most recently started or reported. */
  activeSession: string | null
  fairies: FairyPresence[]
  todos: TodoItem[]
  /** The room's conversation, each item with its place `n` in it (the steward's one order,
   * the same in every tab): each run's prompt and who asked, the chat, the runs' thoughts. A
   * tab that loads, reloads or reconnects reads what it missed from the steward. */
  prompts: PromptItem[]
  chat: ChatItem[]
  thoughts: ThoughtItem[]
  /** Shape ids each run drew or changed in this tab (what "show" zooms to). */
  drawn: Record<string, string[]>
  /** Each project's latest state (plan, tasks with owner and status, waits), oldest first. */
  projects: ProjectState[]
  /** The fairy this tab's camera follows (`follow`), or null. */
  following: string | null
}

/** A tab's state before the steward has told it anything. */
export function initialState(status: ConnectionStatus, stewardPresent: boolean): StewardState {
  return {
    status,
    isHost: false,
    host: null,
    stewardPresent,
    sessions: {},
    activeSession: null,
    fairies: [],
    todos: [],
    prompts: [],
    chat: [],
    thoughts: [],
    drawn: {},
    projects: [],
    following: null,
  }
}

export interface StewardHandle extends CrewApi {
  readonly state: StewardState
  readonly status: ConnectionStatus
  readonly fairies: FairyPresence[]
  readonly todos: TodoItem[]
  readonly chat: ChatMessage[]
  readonly executor: Executor
  readonly editor: Editor
  /** The host's pre-rendered screenshot cache (stats for diagnostics and benches). */
  readonly screenshots: ScreenshotCache
  subscribe(listener: (state: StewardState) => void): () => void
  prompt(message: string, extra?: Omit<PromptRequest, 'message'>): Promise<PromptReply>
  /** The user is composing a prompt (focus, keystrokes): the steward prefetches this tab's
   * context. Pass the `bounds` the prompt will carry (none: this tab's own view). Throttled to one
   * hint per 2 s; returns whether a hint was sent. */
  composing(bounds?: Box | null): boolean
  cancel(sessionId?: string): Promise<CancelReply>
  /** Takes run `sessionId` back as a whole (a running run is cancelled first; a revert's run
   * reverted redoes). Allowed to whoever may cancel the run; the reply names the revert's own
   * run and the shapes left as they are because they changed since. */
  revert(sessionId: string): Promise<RevertReply>
  /** The page bounds of what run `sessionId` drew that is still on the canvas (null: none). */
  runBounds(sessionId: string): Box | null
  /** Zooms this tab's camera to what run `sessionId` drew; false when nothing of it is left. */
  show(sessionId: string): boolean
  /** Flies this tab's camera to a task's area (`{area}`) or a fairy (its task area, else
   * around it); false when there is nowhere to go. */
  flyTo(target: { area?: Box | null } | FairyPresence): boolean
  /** Keeps this tab's camera on fairy `fairyId` as it moves (null: stop following). */
  follow(fairyId: string | null): void
  /** Stops answering and applying in this tab and forgets its listeners; the room stays
   * connected (it is the app's). */
  detach(): void
  /** `detach()`, then leaves the room. */
  disconnect(): Promise<void>
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const MAX_CHAT = 200
const MAX_THOUGHTS = 200
const MAX_PROMPTS = 100
// Pages of the room's conversation a loading tab reads at most (each up to one RPC reply).
const MAX_CONVERSATION_PAGES = 50
const CONVERSATION_ATTEMPTS = 3
const CONVERSATION_RETRY_MS = 1000
const MAX_DRAWN_RUNS = 100
// What a tab sends before its announcement is through (its first view, resync, acks).
const MAX_EARLY_PACKETS = 64
const MAX_DRAWN_PER_RUN = 2000

function parse<T>(payload: Uint8Array): T | null {
  try {
    return JSON.parse(decoder.decode(payload)) as T
  } catch {
    return null
  }
}

export function connectSteward({ room, editor, options = {} }: { room: Room; editor: Editor; options?: StewardOptions }): StewardHandle {
  const stewardIdentity = options.stewardIdentity ?? 'canvas-steward'
  const mode: ApplyMode = options.mode ?? 'relay'
  const log = options.log ?? ((msg: string, extra?: unknown) => console.debug('[steward]', msg, extra ?? ''))
  const storage = options.storage === undefined ? (typeof sessionStorage === 'undefined' ? null : sessionStorage) : options.storage
  const persistDocument = options.persistDocument ?? mode === 'relay'
  const rpcTimeout = Math.max(8000, options.rpcTimeoutMs ?? 15000)

  const memory = new ReloadMemory(
    storage,
    options.memoryKey ?? `steward:${room.name}`,
    persistDocument ? () => editor.store.getStoreSnapshot('document') : null,
  )
  // A reload restores the document and the ledger together (they were saved together).
  const restored = persistDocument && memory.state.document
  if (restored) {
    try {
      editor.loadSnapshot(memory.state.document as never)
    } catch (err) {
      log('could not restore the saved document; starting fresh', String(err))
      memory.state = { v: 1, sessions: {}, partials: {}, fragments: {} }
    }
  }

  let state = initialState(room.state === ConnectionState.Connected ? 'connected' : 'connecting', room.remoteParticipants.has(stewardIdentity))
  const listeners = new Set<(s: StewardState) => void>()
  // The place of an item in the room's conversation: the steward numbers every item (an item
  // without a number, from an older steward, goes after everything seen).
  let lastN = 0
  const placed = (n: number | null | undefined) => {
    const at = typeof n === 'number' && n > 0 ? n : lastN + 0.5
    lastN = Math.max(lastN, at)
    return at
  }
  const byN = <T extends { n: number }>(items: T[]) => items.sort((a, b) => a.n - b.n)
  const noteDrawn = (sessionId: string, ids: string[]) => {
    const had = state.drawn[sessionId] ?? []
    const fresh = ids.filter((id) => !had.includes(id))
    if (fresh.length === 0) return
    const drawn = { ...state.drawn, [sessionId]: [...had, ...fresh].slice(-MAX_DRAWN_PER_RUN) }
    const runs = Object.keys(drawn)
    for (const old of runs.slice(0, Math.max(0, runs.length - MAX_DRAWN_RUNS))) delete drawn[old]
    set({ drawn })
  }
  const set = (patch: Partial<StewardState>) => {
    state = { ...state, ...patch }
    for (const l of listeners) l(state)
  }

  const send = (topic: string, body: unknown) =>
    room.localParticipant
      .publishData(encoder.encode(JSON.stringify(body)), { reliable: true, topic, destinationIdentities: [stewardIdentity] })
      .catch((err: unknown) => log('publish failed', { topic, err: String(err) }))
  // Until this tab's announcement is through, the steward may not know it yet: the server
  // passes data on at once but may batch a join for seconds, and a packet from a participant
  // the steward has not seen join has no sender it can trust, so it is refused. What this tab
  // sends before then waits (bounded) and leaves in order right after the announcement.
  let announced = false
  const early: Array<[string, unknown]> = []
  const publish = (topic: string, body: unknown) => {
    if (room.state !== ConnectionState.Connected) return
    if (announced) void send(topic, body)
    else if (early.length < MAX_EARLY_PACKETS) early.push([topic, body])
  }

  const edits = new EditTracker({ editor, relay: mode === 'relay', send: (edit) => publish(TOPIC_EDIT, edit) })
  // Acks leave delayed and merged (one per session per ACK_DELAY_MS at most).
  const acks = new DelayedAcks((ack) => publish(TOPIC_ACK, ack))
  const executor = new Executor({
    editor,
    memory,
    // Host mode too: the steward sends envelopes only to the host it elected, so what arrives
    // is this tab's to apply, even before this tab's own election has caught up (a handover).
    appliesCanvas: () => true,
    isHost: () => state.isHost,
    applyAsUser: mode === 'host' ? (apply) => edits.asAgent(apply) : undefined,
    sendAck: (ack) => acks.add(ack),
    sendResync: (r) => publish(TOPIC_RESYNC, r),
    log,
    // Thoughts come from the conversation (`agent:thought`), numbered like the chat.
    ui: {
      todo: (_sid, items) => set({ todos: items }),
      drew: (sessionId, ids) => {
        if (!sessionId.startsWith('relay:')) noteDrawn(sessionId, ids)
      },
      setViewport: (box: Box) => editor.zoomToBounds(box, { animation: { duration: 200 } }),
    },
  })

  const stopViewport = publishViewport(editor, (u) => publish(TOPIC_VIEWPORT, u))
  const composingHints = new ComposingThrottle({ send: (hint) => publish(TOPIC_COMPOSING, hint) })

  // The document version as of now: store listeners are flushed once per frame, and
  // subscribing to the store flushes pending history synchronously.
  const docVersion = () => {
    editor.store.listen(() => {})()
    return edits.docVersion
  }
  // The host, and a tab whose user prompts (the steward asks the asker's own tab for its
  // context), pre-render the screenshot while the canvas is idle (toImage takes seconds on
  // big canvases, longer than the steward waits for context).
  const screenshots = new ScreenshotCache({
    render: (bounds, maxSize, maxBytes) => renderScreenshot(editor, bounds, maxSize, pageEncoding, log, { maxBytes }),
    docVersion,
    viewport: () => viewportBox(editor),
    log,
  })
  // Session changes include the camera: a pan or zoom changes the box to pre-render.
  const stopShotWatch = [
    editor.store.listen(() => screenshots.changed(), { scope: 'document' }),
    editor.store.listen(() => screenshots.changed(), { scope: 'session' }),
  ]

  // ---- host election -------------------------------------------------------------------
  let prompts = false // this tab's user prompts: keep its own view pre-rendered from then on
  const prompting = () => {
    prompts = true
    screenshots.start()
  }
  const refreshHost = () => {
    const host = electHost(room, stewardIdentity)
    const isHost = host === room.localParticipant.identity
    const stewardPresent = room.remoteParticipants.has(stewardIdentity)
    if (host !== state.host || isHost !== state.isHost || stewardPresent !== state.stewardPresent) set({ host, isHost, stewardPresent })
    if (isHost || prompts) screenshots.start()
    else screenshots.stop()
  }

  // ---- the conversation ----------------------------------------------------------------
  // Live and loaded items meet here: each kept once (by its id, run or number), in the
  // steward's order. A message's newer version replaces the older and keeps its place.
  const withChat = (chat: ChatItem[], msgs: ChatMessage[]) => {
    let out = chat
    for (const msg of msgs) {
      let i = out.findIndex((m) => m.id === msg.id)
      // A streamed message replaces its own previous partial version.
      const last = out[out.length - 1]
      if (i < 0 && msg.n == null && last?.partial && last.sessionId === msg.sessionId && last.role === msg.role && last.fairy === msg.fairy) i = out.length - 1
      if (i >= 0) {
        // A loaded (whole) version never replaces a newer live one, nor a whole one a partial.
        if (out[i]!.ts > msg.ts) continue
        out = out.map((m, j) => (j === i ? { ...msg, n: m.n } : m))
      } else out = [...out, { ...msg, n: placed(msg.n) }]
    }
    return byN(out === chat ? [...out] : out).slice(-MAX_CHAT)
  }
  const withPrompts = (prompts: PromptItem[], msgs: PromptNotice[]) => {
    const fresh = msgs.filter((m) => !prompts.some((p) => p.sessionId === m.sessionId))
    return fresh.length ? byN([...prompts, ...fresh.map((m) => ({ ...m, n: placed(m.n) }))]).slice(-MAX_PROMPTS) : prompts
  }
  const withThoughts = (thoughts: ThoughtItem[], msgs: ThoughtMessage[]) => {
    const fresh = msgs.filter((m) => m.n == null || !thoughts.some((t) => t.n === m.n))
    return fresh.length ? byN([...thoughts, ...fresh.map((m) => ({ ...m, n: placed(m.n) }))]).slice(-MAX_THOUGHTS) : thoughts
  }
  const withStatuses = (sessions: Record<string, StatusMessage>, msgs: StatusMessage[]) => {
    const out = { ...sessions }
    for (const m of msgs) if (!out[m.sessionId] || out[m.sessionId]!.ts <= m.ts) out[m.sessionId] = m
    return out
  }
  // Reads the room's conversation, page by page, and merges it in (one load at a time; a
  // load asked for meanwhile runs after it).
  let loading: Promise<void> | null = null
  let loadAgain = false
  const loadConversation = (): Promise<void> => {
    if (loading) {
      loadAgain = true
      return loading
    }
    loading = (async () => {
      do {
        loadAgain = false
        let after = 0
        let failures = 0
        for (let page = 0; page < MAX_CONVERSATION_PAGES && !detached; page++) {
          const reply = await rpc<ConversationReply>(RPC_CONVERSATION, { after })
          if (reply.error) {
            // A steward that just joined answers once its methods are registered.
            log('conversation not loaded', reply.error)
            if (++failures >= CONVERSATION_ATTEMPTS) break
            await new Promise((r) => setTimeout(r, CONVERSATION_RETRY_MS))
            page--
            continue
          }
          const sessions = withStatuses(state.sessions, reply.statuses ?? [])
          // A tab that just loaded shows the latest run's status, as one that saw it live.
          const latest = (reply.statuses ?? []).reduce<StatusMessage | null>((a, b) => (!a || (b.n ?? 0) > (a.n ?? 0) ? b : a), null)
          set({
            prompts: withPrompts(state.prompts, reply.prompts ?? []),
            chat: withChat(state.chat, reply.chat ?? []),
            thoughts: withThoughts(state.thoughts, reply.thoughts ?? []),
            sessions,
            activeSession: state.activeSession ?? latest?.sessionId ?? null,
          })
          if (reply.next == null) break
          after = reply.next
        }
      } while (loadAgain && !detached)
    })().finally(() => {
      loading = null
    })
    return loading
  }

  // ---- inbound -------------------------------------------------------------------------
  const onData = (payload: Uint8Array, participant?: RemoteParticipant, _kind?: unknown, topic?: string) => {
    // The sender is the packet's participant identity, never a payload field.
    if (!participant || participant.identity !== stewardIdentity || !topic) return
    switch (topic) {
      case TOPIC_ACTION:
      case TOPIC_ACTIONS: {
        const envelopes = envelopesIn(topic, parse<unknown>(payload))
        if (!envelopes) {
          log('bad envelope dropped', { topic })
          return
        }
        executor.receiveAll(envelopes)
        const agent = envelopes.filter((env) => !env.sessionId.startsWith('relay:')).pop()
        if (agent && state.activeSession !== agent.sessionId) set({ activeSession: agent.sessionId })
        break
      }
      case TOPIC_CHAT: {
        const msg = parse<ChatMessage>(payload)
        if (msg && typeof msg.id === 'string') set({ chat: withChat(state.chat, [msg]) })
        break
      }
      case TOPIC_PROMPT: {
        const msg = parse<PromptNotice>(payload)
        if (!msg || typeof msg.sessionId !== 'string' || typeof msg.asker !== 'string' || typeof msg.text !== 'string') return
        set({ prompts: withPrompts(state.prompts, [msg]) })
        break
      }
      case TOPIC_THOUGHT: {
        const msg = parse<ThoughtMessage>(payload)
        if (msg && typeof msg.sessionId === 'string' && typeof msg.text === 'string') set({ thoughts: withThoughts(state.thoughts, [msg]) })
        break
      }
      case TOPIC_STATUS: {
        const msg = parse<StatusMessage>(payload)
        if (!msg || typeof msg.sessionId !== 'string') return
        if (typeof msg.lastSeq === 'number') executor.sequencer.expect(msg.sessionId, msg.lastSeq)
        set({ sessions: { ...state.sessions, [msg.sessionId]: msg }, activeSession: msg.sessionId })
        break
      }
      case TOPIC_FAIRIES: {
        const msg = parse<FairiesMessage>(payload)
        if (msg && Array.isArray(msg.fairies)) {
          set({ fairies: msg.fairies })
          const followed = msg.fairies.find((f) => f.id === state.following)
          if (followed) editor.centerOnPoint(followed.position, { animation: { duration: 120 } })
        }
        break
      }
      case TOPIC_PROJECT: {
        const projects = withProject(state.projects, parse<unknown>(payload))
        if (projects !== state.projects) set({ projects })
        break
      }
    }
  }

  const onConnection = (cs: ConnectionState) => {
    const status: ConnectionStatus =
      cs === ConnectionState.Connected ? 'connected' : cs === ConnectionState.Reconnecting || cs === ConnectionState.SignalReconnecting ? 'reconnecting' : cs === ConnectionState.Disconnected ? 'disconnected' : 'connecting'
    set({ status })
    if (status === 'connected' && !announcing) void announce()
  }

  // After a reconnect (or when the steward (re)joins) ask for everything this tab missed:
  // the canvas's envelopes and the conversation.
  const resync = () => {
    const kept = memory.knownSessions().length > 0
    publish(TOPIC_RESYNC, { sessionId: RESYNC_ALL_SESSIONS, lastSeq: kept ? 1 : 0 })
    executor.resyncAll()
    void loadConversation()
  }
  const onReconnected = () => {
    refreshHost()
    resync()
  }
  const onParticipantConnected = (p: Participant) => {
    refreshHost()
    if (p.identity === stewardIdentity) resync()
  }

  room.on(RoomEvent.DataReceived, onData)
  room.on(RoomEvent.ConnectionStateChanged, onConnection)
  room.on(RoomEvent.Reconnected, onReconnected)
  room.on(RoomEvent.ParticipantConnected, onParticipantConnected)
  room.on(RoomEvent.ParticipantDisconnected, refreshHost)
  room.on(RoomEvent.ParticipantAttributesChanged, refreshHost)

  room.registerRpcMethod(RPC_CONTEXT, async (data) => {
    if (data.callerIdentity !== stewardIdentity) throw new RpcError(1500, 'only the steward may ask for context')
    let req: ContextRequest
    try {
      req = JSON.parse(data.payload) as ContextRequest
      if (!req || typeof req.requestId !== 'string') throw new Error('requestId missing')
    } catch (err) {
      throw new RpcError(1500, `bad context request: ${String(err)}`)
    }
    const reply = await answerContext(
      {
        editor,
        sender: room.localParticipant,
        docVersion,
        takeUserChanges: () => edits.takeUserChanges(),
        screenshots,
        log,
      },
      data.callerIdentity,
      req,
    )
    let text = JSON.stringify(reply)
    if (encoder.encode(text).byteLength > MAX_RPC_PAYLOAD_BYTES) {
      // The selection or the change list is what grows; the steward still gets the streams.
      text = JSON.stringify({ ...reply, selection: reply.selection?.slice(0, 200), userChanges: reply.userChanges?.slice(0, 100) })
    }
    return text
  })

  // Announce what this tab can do (the steward elects the host among `context` browsers).
  let announcing = false
  const announce = () => {
    announcing = true
    return room.localParticipant
      .setAttributes({ ...room.localParticipant.attributes, [ATTR_CAPABILITIES]: 'context,screenshot,apply' })
      .catch((err: unknown) => log('setAttributes failed', String(err)))
      .then(() => {
        announced = true
        for (const [topic, body] of early.splice(0)) void send(topic, body)
        refreshHost()
      })
  }

  const retryTimer = setInterval(() => executor.sequencer.retryGaps(), 1000)
  let detached = false
  const onPageHide = () => {
    edits.flush()
    // What was applied is acked if the room is still up (host mode: the next host would
    // apply an unacked envelope again).
    acks.flush()
    memory.saveNow()
  }
  if (typeof window !== 'undefined') window.addEventListener('pagehide', onPageHide)

  const rpc = async <T>(method: string, payload: unknown): Promise<T> => {
    try {
      const text = await room.localParticipant.performRpc({
        destinationIdentity: stewardIdentity,
        method,
        payload: JSON.stringify(payload),
        responseTimeout: rpcTimeout,
      })
      return JSON.parse(text) as T
    } catch (err) {
      const message = err instanceof RpcError ? `${err.message}${err.data ? `: ${err.data}` : ''}` : String(err)
      return { error: message } as T
    }
  }

  if (room.state === ConnectionState.Connected) {
    void announce()
    if (room.remoteParticipants.has(stewardIdentity)) resync()
  }
  refreshHost()

  const runBounds = (sessionId: string): Box | null =>
    unionBox(
      (state.drawn[sessionId] ?? []).map((id) => {
        const b = editor.getShape(id as TLShapeId) ? editor.getShapePageBounds(id as TLShapeId) : undefined
        return b ? { x: b.x, y: b.y, w: b.w, h: b.h } : null
      }),
    )

  const handle: StewardHandle = {
    get state() {
      return state
    },
    get status() {
      return state.status
    },
    get fairies() {
      return state.fairies
    },
    get todos() {
      return state.todos
    },
    get chat() {
      return state.chat
    },
    executor,
    editor,
    screenshots,
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async prompt(message, extra = {}) {
      composingHints.reset()
      prompting()
      const reply = await rpc<PromptReply>(RPC_PROMPT, { ...extra, message })
      if (reply.sessionId) set({ activeSession: reply.sessionId })
      return reply
    },
    composing(bounds) {
      prompting()
      return composingHints.composing(bounds)
    },
    async cancel(sessionId) {
      const sid = sessionId ?? state.activeSession
      if (!sid) return { ok: false, error: 'no session to cancel' }
      return rpc<CancelReply>(RPC_CANCEL, { sessionId: sid })
    },
    async revert(sessionId) {
      const reply = await rpc<RevertReply>(RPC_REVERT, { sessionId })
      if (reply.sessionId) set({ activeSession: reply.sessionId })
      return reply
    },
    ...crewApi(rpc),
    flyTo(target) {
      const box = focusBox(target)
      if (!box) return false
      const pad = Math.max(box.w, box.h, 1) * 0.15
      editor.zoomToBounds(new TlBox(box.x - pad, box.y - pad, box.w + 2 * pad, box.h + 2 * pad), { animation: { duration: 200 } })
      return true
    },
    follow(fairyId) {
      set({ following: fairyId })
      const fairy = state.fairies.find((f) => f.id === fairyId)
      if (fairy) handle.flyTo(fairy)
    },
    runBounds,
    show(sessionId) {
      const box = runBounds(sessionId)
      if (!box) return false
      // A margin around the drawing, so its edges are not under the panel or the toolbar.
      const pad = Math.max(box.w, box.h, 1) * 0.1
      editor.zoomToBounds(new TlBox(box.x - pad, box.y - pad, box.w + 2 * pad, box.h + 2 * pad), { animation: { duration: 200 } })
      return true
    },
    detach() {
      if (detached) return
      detached = true
      clearInterval(retryTimer)
      if (typeof window !== 'undefined') window.removeEventListener('pagehide', onPageHide)
      edits.flush()
      acks.flush() // what was applied is acked before leaving
      memory.saveNow()
      memory.dispose()
      stopViewport()
      screenshots.stop()
      for (const stop of stopShotWatch) stop()
      edits.dispose()
      room.off(RoomEvent.DataReceived, onData)
      room.off(RoomEvent.ConnectionStateChanged, onConnection)
      room.off(RoomEvent.Reconnected, onReconnected)
      room.off(RoomEvent.ParticipantConnected, onParticipantConnected)
      room.off(RoomEvent.ParticipantDisconnected, refreshHost)
      room.off(RoomEvent.ParticipantAttributesChanged, refreshHost)
      room.unregisterRpcMethod(RPC_CONTEXT)
    },
    async disconnect() {
      handle.detach()
      await room.disconnect()
      set({ status: 'disconnected' })
    },
  }
  return handle
}
