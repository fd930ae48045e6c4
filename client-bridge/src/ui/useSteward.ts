import { useEffect, useState } from 'react'
import type { StewardHandle, StewardState } from '../steward'

/** The handle's state as React state. */
export function useStewardState(handle: StewardHandle | null): StewardState | null {
  const [state, setState] = useState<StewardState | null>(handle ? handle.state : null)
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
