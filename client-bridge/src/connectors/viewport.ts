// Connector: the user's viewport and selection, published at most every 80 ms (trailing
// edge, so the last position always arrives).
import { react, type Editor } from 'tldraw'
import { VIEWPORT_MIN_INTERVAL_MS, type ViewportUpdate } from '../protocol.gen'
import { selectionIds, viewportBox } from './context'

export function publishViewport(editor: Editor, send: (u: ViewportUpdate) => void, intervalMs = VIEWPORT_MIN_INTERVAL_MS) {
  let last = 0
  let timer: ReturnType<typeof setTimeout> | null = null
  const fire = () => {
    timer = null
    last = Date.now()
    send({ viewport: viewportBox(editor), selection: selectionIds(editor), ts: last / 1000 })
  }
  const stop = react('steward viewport', () => {
    editor.getViewportPageBounds()
    editor.getSelectedShapeIds()
    if (timer) return
    timer = setTimeout(fire, Math.max(0, intervalMs - (Date.now() - last)))
  })
  return () => {
    stop()
    if (timer) clearTimeout(timer)
  }
}
