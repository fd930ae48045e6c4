// Voice in the browser: captions of everyone in the room, who is speaking, and the
// push-to-talk microphone. The steward (or another voice agent) transcribes microphones and
// sends `lk.transcription` text streams; `lk.transcribed_track_id` says whose track was heard,
// `lk.segment_id` ties interim updates to their final text.
import { RoomEvent, type Participant, type Room, type TextStreamReader } from 'livekit-client'
import { TOPIC_TRANSCRIPTION } from '../protocol.gen'

export interface Caption {
  segmentId: string
  speaker: string
  text: string
  final: boolean
  at: number
}

export interface VoiceState {
  captions: Caption[]
  /** Identities LiveKit reports as speaking now (the local one included). */
  speaking: string[]
  micOn: boolean
  micError: string | null
}

export interface VoiceHandle {
  readonly state: VoiceState
  subscribe(listener: (state: VoiceState) => void): () => void
  /** Push-to-talk: open (first use asks for the microphone) or mute the microphone. */
  setMic(on: boolean): Promise<void>
  close(): void
}

// Captions kept on screen: the latest few segments.
const MAX_CAPTIONS = 6

function owner(room: Room, trackSid: string | undefined, fallback: string): string {
  if (!trackSid) return fallback
  const all: Participant[] = [room.localParticipant, ...room.remoteParticipants.values()]
  return all.find((p) => p.trackPublications.has(trackSid))?.identity ?? fallback
}

export function connectVoice(room: Room): VoiceHandle {
  let state: VoiceState = { captions: [], speaking: [], micOn: false, micError: null }
  const listeners = new Set<(s: VoiceState) => void>()
  const set = (patch: Partial<VoiceState>) => {
    state = { ...state, ...patch }
    for (const l of listeners) l(state)
  }

  const onCaption = async (reader: TextStreamReader, from: { identity: string }) => {
    const attrs = reader.info.attributes ?? {}
    const segmentId = attrs['lk.segment_id'] ?? reader.info.id
    const text = (await reader.readAll()).trim()
    if (!text) return
    const caption: Caption = {
      segmentId,
      speaker: owner(room, attrs['lk.transcribed_track_id'], from.identity),
      text,
      final: attrs['lk.transcription_final'] === 'true',
      at: Date.now(),
    }
    // An update replaces its segment's earlier text; a final is never replaced by an interim.
    const old = state.captions.find((c) => c.segmentId === segmentId)
    if (old?.final && !caption.final) return
    const rest = state.captions.filter((c) => c.segmentId !== segmentId)
    set({ captions: [...rest, caption].slice(-MAX_CAPTIONS) })
  }
  room.registerTextStreamHandler(TOPIC_TRANSCRIPTION, (reader, from) => {
    onCaption(reader, from).catch((err: unknown) => console.warn('[steward] caption lost', err))
  })

  const onSpeakers = (speakers: Participant[]) => set({ speaking: speakers.map((p) => p.identity) })
  room.on(RoomEvent.ActiveSpeakersChanged, onSpeakers)

  return {
    get state() {
      return state
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async setMic(on) {
      try {
        await room.localParticipant.setMicrophoneEnabled(on)
        set({ micOn: on, micError: null })
      } catch (err) {
        set({ micOn: false, micError: String(err) })
      }
    },
    close() {
      room.off(RoomEvent.ActiveSpeakersChanged, onSpeakers)
      room.unregisterTextStreamHandler(TOPIC_TRANSCRIPTION)
      listeners.clear()
    },
  }
}
