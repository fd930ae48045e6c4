// Fairies drawn on the canvas at their page positions, with their task bounds; rendered in
// front of the canvas and kept in page space as the camera moves.
import { useEditor, useValue } from 'tldraw'
import type { StewardHandle } from '../steward'
import { useStewardState } from './useSteward'
import { modeLabel } from './modes'

const COLORS: Record<string, string> = {
  black: '#1d1d1d', grey: '#9fa8b2', 'light-violet': '#e085f4', violet: '#ae3ec9', blue: '#4465e9',
  'light-blue': '#4ba1f1', yellow: '#f1ac4b', orange: '#e16919', green: '#099268', 'light-green': '#4cb05e',
  'light-red': '#f87777', red: '#e03131', white: '#ffffff',
}
export const cssColor = (c: string) => COLORS[c] ?? c

export function FairyOverlay({ handle }: { handle: StewardHandle | null }) {
  const editor = useEditor()
  const state = useStewardState(handle)
  // Re-render on camera changes so fairies stay attached to the page.
  const camera = useValue('camera', () => editor.getCamera(), [editor])
  if (!state) return null
  const z = camera.z
  const toScreen = (x: number, y: number) => ({ x: (x + camera.x) * z, y: (y + camera.y) * z })
  return (
    <div className="steward-fairies" style={{ position: 'absolute', inset: 0, pointerEvents: 'none', overflow: 'hidden' }}>
      {state.fairies.map((f) => {
        const p = toScreen(f.position.x, f.position.y)
        const color = cssColor(f.color)
        const tb = f.taskBounds
        const t = tb ? toScreen(tb.x, tb.y) : null
        return (
          <div key={f.id} data-fairy={f.id}>
            {tb && t && (
              <div
                className="steward-task-bounds"
                style={{ position: 'absolute', left: t.x, top: t.y, width: tb.w * z, height: tb.h * z, border: `2px dashed ${color}`, borderRadius: 6, background: `${color}0f` }}
              />
            )}
            <div
              className="steward-fairy"
              title={`${f.name} · ${f.mode}`}
              style={{ position: 'absolute', left: p.x, top: p.y, transform: 'translate(-50%, -50%)', transition: 'left 120ms linear, top 120ms linear', display: 'flex', alignItems: 'center', gap: 4 }}
            >
              <svg width="22" height="22" viewBox="0 0 22 22" aria-hidden>
                <circle cx="11" cy="11" r="7" fill={color} stroke="white" strokeWidth="2" />
                <path d="M4 6 L9 9 M18 6 L13 9" stroke={color} strokeWidth="2" strokeLinecap="round" />
              </svg>
              <span style={{ font: '11px sans-serif', color: '#fff', background: color, padding: '1px 5px', borderRadius: 8, whiteSpace: 'nowrap' }}>
                {f.name} · {modeLabel(f.mode)}
              </span>
            </div>
          </div>
        )
      })}
    </div>
  )
}
