// useSteward and detach: the app's room is the app's. Detaching (unmount, React's StrictMode
// double effects) unregisters what the steward added to the room and leaves it connected;
// only disconnect() leaves the room.
import { ConnectionState, type Room } from 'livekit-client'
import { act, createElement, StrictMode, version } from 'react'
import { createRoot } from 'react-dom/client'
import { describe, expect, it } from 'vitest'
import { connectSteward, type StewardHandle } from '../src/index'
import { useSteward } from '../src/ui/useSteward'
import { makeEditor } from './harness'

/** The parts of a livekit-client Room the steward uses, counting what it registers. */
function fakeRoom() {
  const listeners = new Map<string, Set<unknown>>()
  const rpc = new Set<string>()
  const fake = {
    name: 'r1',
    state: ConnectionState.Disconnected,
    disconnects: 0,
    rpc,
    listenerCount: () => [...listeners.values()].reduce((n, s) => n + s.size, 0),
    remoteParticipants: new Map(),
    localParticipant: { identity: 'me', attributes: {}, setAttributes: async () => {}, publishData: async () => {}, performRpc: async () => '{}' },
    on(event: string, fn: unknown) {
      if (!listeners.has(event)) listeners.set(event, new Set())
      listeners.get(event)!.add(fn)
      return fake
    },
    off(event: string, fn: unknown) {
      listeners.get(event)?.delete(fn)
      return fake
    },
    registerRpcMethod(method: string) {
      // livekit-client refuses a second handler for one method.
      if (rpc.has(method)) throw new Error(`RPC handler already registered for ${method}`)
      rpc.add(method)
    },
    unregisterRpcMethod(method: string) {
      rpc.delete(method)
    },
    async disconnect() {
      fake.disconnects += 1
    },
  }
  return fake
}

describe('detach and disconnect', () => {
  it('detach removes listeners and the RPC handler and keeps the room; a new connection works', async () => {
    const room = fakeRoom()
    const editor = makeEditor()
    const first = connectSteward({ room: room as unknown as Room, editor, options: { storage: null } })
    expect(room.rpc.size).toBe(1)
    expect(room.listenerCount()).toBeGreaterThan(0)
    first.detach()
    first.detach() // twice is harmless
    expect(room.rpc.size).toBe(0)
    expect(room.listenerCount()).toBe(0)
    expect(room.disconnects).toBe(0)
    const second = connectSteward({ room: room as unknown as Room, editor, options: { storage: null } })
    expect(room.rpc.size).toBe(1)
    await second.disconnect()
    expect(room.rpc.size).toBe(0)
    expect(room.disconnects).toBe(1)
    expect(second.state.status).toBe('disconnected')
  })
})

describe('useSteward', () => {
  it('runs on the React major this run is for (19; 18 with vitest.react18.config.ts)', () => {
    expect(version.split('.')[0]).toBe(process.env.STEWARD_REACT ?? '19')
  })

  it('connects once both are there, survives StrictMode, and detaches on unmount', async () => {
    ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
    const room = fakeRoom()
    const editor = makeEditor()
    const seen: Array<StewardHandle | null> = []
    const Probe = ({ withEditor }: { withEditor: boolean }) => {
      seen.push(useSteward(room as unknown as Room, withEditor ? editor : null, { storage: null }))
      return null
    }
    const root = createRoot(document.createElement('div'))
    await act(async () => root.render(createElement(StrictMode, null, createElement(Probe, { withEditor: false }))))
    expect(seen.every((h) => h === null)).toBe(true)
    expect(room.rpc.size).toBe(0)
    await act(async () => root.render(createElement(StrictMode, null, createElement(Probe, { withEditor: true }))))
    const handle = seen.at(-1)
    expect(handle).not.toBeNull()
    expect(handle!.editor).toBe(editor)
    expect(room.rpc.size).toBe(1) // StrictMode's mount, detach, mount left one handler
    await act(async () => root.unmount())
    expect(room.rpc.size).toBe(0)
    expect(room.listenerCount()).toBe(0)
    expect(room.disconnects).toBe(0)
  })
})
