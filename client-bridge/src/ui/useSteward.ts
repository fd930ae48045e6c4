import { useEffect, useState } from 'react'
import type { Room } from 'livekit-client'
import type { Editor } from 'tldraw'
import { connectSteward, type StewardHandle, type StewardOptions, type StewardState } from '../steward'

/** Anything that holds a state and tells listeners when it changes (steward, voice). */
export interface Observable<S> {
  readonly state: S
  subscribe(listener: (state: S) => void): () => void
}

/** The handle's state as React state. */
export function useHandleState<S>(handle: Observable<S> | null): S | null {
  const [state, setState] = useState<S | null>(handle ? handle.state : null)
  useEffect(() => {
    if (!handle) return
    setState(handle.state)
    const unsubscribe = handle.subscribe(setState)
    return () => {
      unsubscribe()
    }
  }, [handle])
  return state
}

export function useStewardState(handle: StewardHandle | null): StewardState | null {
  return useHandleState(handle)
}

/**
 * Connects a tldraw editor and a connected livekit-client room to the steward while the
 * component is mounted; null until both are there. The room stays the app's: unmounting (or a
 * new room, editor or mode) detaches the steward from it without leaving it.
 */
export function useSteward(room: Room | null, editor: Editor | null, options: StewardOptions = {}): StewardHandle | null {
  const [handle, setHandle] = useState<StewardHandle | null>(null)
  // Options are read when connecting; only the ones that change what is connected reconnect.
  const { mode, stewardIdentity, memoryKey } = options
  useEffect(() => {
    if (!room || !editor) return
    const h = connectSteward({ room, editor, options })
    setHandle(h)
    return () => {
      h.detach()
      setHandle(null)
    }
  }, [room, editor, mode, stewardIdentity, memoryKey])
  return handle
}
