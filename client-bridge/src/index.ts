// The package's public surface: connect a tldraw editor and a livekit-client room to the
// steward (`useSteward` in React, `connectSteward` elsewhere), and the panel, overlay and voice
// components the demo uses. Styles: `@canvas-steward/client-bridge/steward.css`.
export { connectSteward } from './steward'
export type { ApplyMode, ChatItem, ConnectionStatus, PromptItem, StewardHandle, StewardOptions, StewardState, ThoughtItem } from './steward'
export { useSteward, useStewardState, useHandleState, type Observable } from './ui/useSteward'
export { timeline, type Run, type RunEntry } from './ui/timeline'
export { Executor } from './executor/executor'
export type { TodoItem, UiSink } from './executor/executor'
export { ReloadMemory } from './executor/memory'
export { readPage, applyToEditor } from './canvas/editor-canvas'
export { toSteward, type StewardShape } from './canvas/record'
export { StewardPanel } from './ui/StewardPanel'
export { FairyOverlay } from './ui/FairyOverlay'
export * as protocol from './protocol.gen'
export { connectVoice } from './voice/voice'
export type { Caption, VoiceHandle, VoiceState } from './voice/voice'
export { VoiceBar } from './ui/VoiceBar'
