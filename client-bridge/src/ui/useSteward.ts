import { useEffect, useState } from 'react'
import type { StewardHandle, StewardState } from '../steward'

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
