"""The steward hears the room: one STT stream per microphone it is meant to transcribe.

Whom it listens to is the room's decision (`Hearing`): a participant who may prompt is
transcribed and their final segments go to intake; one who may not is captioned only, or
not listened to at all. Agents are never transcribed (a voice agent's microphone is its own
speech), nor a speaker another voice agent already transcribes: its transcripts are the
captions and the prompts, and hearing both would run one utterance twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from livekit import rtc
from livekit.agents import stt

from steward.obs.logging import get_logger
from steward.protocol.names import TOPIC_TRANSCRIPTION
from steward.task_set import TaskSet
from steward.voice.captions import new_segment_id, publish_caption
from steward.voice.local_stt import SAMPLE_RATE

log = get_logger(__name__)

# What the steward does with one participant's microphone.
Hearing = Literal["prompt", "captions", "ignore"]
# (speaker, final text, wall time the speech ended) → a prompt, perhaps.
OnFinal = Callable[[str, str, float], Awaitable[None]]


def _is_microphone(publication: rtc.TrackPublication) -> bool:
    return bool(
        publication.kind == rtc.TrackKind.KIND_AUDIO
        and publication.source == rtc.TrackSource.SOURCE_MICROPHONE
    )


class RoomVoice:
    """Transcribes the room's microphones it is meant to hear and hands final segments on."""

    def __init__(
        self,
        room: rtc.Room,
        room_id: str,
        engine: stt.STT[Any],
        *,
        hearing: Callable[[str], Hearing],
        on_final: OnFinal,
        may_speak: Callable[[str], Awaitable[bool]] | None = None,
        on_interim: Callable[[str, str], None] | None = None,
    ) -> None:
        self.room = room
        self.room_id = room_id
        self._engine = engine
        self._hearing = hearing
        self._on_final = on_final
        # The room's lease gate: a replaced steward publishes no caption either.
        self._may_speak = may_speak
        # (speaker, text so far) of each unfinished segment of someone who may prompt.
        self._on_interim = on_interim
        self._listening: dict[str, asyncio.Task[None]] = {}  # track sid → its stream
        self._speaker_of: dict[str, str] = {}  # track sid → speaker
        self._elsewhere: set[str] = set()
        self._tasks = TaskSet("voice_prompt_failed", room=room_id)
        # Utterances finalised, for tests and the voice bench.
        self.finals = 0

    def start(self) -> None:
        room = self.room
        room.on("track_published", self._on_published)
        room.on("track_subscribed", self._on_subscribed)
        room.on("track_unsubscribed", self._on_unsubscribed)
        room.on("participant_disconnected", self._on_disconnected)
        for participant in room.remote_participants.values():
            for publication in participant.track_publications.values():
                self._on_published(publication, participant)
                if publication.track is not None and publication.subscribed:
                    self._on_subscribed(publication.track, publication, participant)

    async def close(self) -> None:
        room = self.room
        room.off("track_published", self._on_published)
        room.off("track_subscribed", self._on_subscribed)
        room.off("track_unsubscribed", self._on_unsubscribed)
        room.off("participant_disconnected", self._on_disconnected)
        tasks = list(self._listening.values())
        for task in tasks:
            task.cancel()
        await self._tasks.close()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._listening.clear()

    async def handled(self) -> None:
        """Wait until every final heard so far has been through intake (a prompt started, a
        command run, or nothing): its caption goes out after, so a test that has seen the
        caption knows the decision is made once this returns."""
        await self._tasks.wait()

    @property
    def listening_to(self) -> set[str]:
        return {self._speaker_of[sid] for sid in self._listening}

    def transcribed_elsewhere(self, speaker: str) -> None:
        """Another voice agent captions this speaker: stop hearing them ourselves."""
        if speaker in self._elsewhere:
            return
        self._elsewhere.add(speaker)
        for sid, who in list(self._speaker_of.items()):
            if who == speaker:
                self._stop(sid)
        log.info("voice_transcribed_elsewhere", room=self.room_id, participant=speaker)

    def _wanted(self, participant: rtc.RemoteParticipant) -> Hearing:
        if participant.kind == rtc.ParticipantKind.PARTICIPANT_KIND_AGENT:
            return "ignore"
        if participant.identity in self._elsewhere:
            return "ignore"
        return self._hearing(participant.identity)

    def _on_published(
        self, publication: rtc.RemoteTrackPublication, participant: rtc.RemoteParticipant
    ) -> None:
        # Workers join with auto-subscribe off: ask for the microphones we transcribe.
        if _is_microphone(publication) and not publication.subscribed:
            if self._wanted(participant) != "ignore":
                publication.set_subscribed(True)

    def _on_subscribed(
        self,
        track: rtc.Track,
        publication: rtc.RemoteTrackPublication,
        participant: rtc.RemoteParticipant,
    ) -> None:
        if not _is_microphone(publication) or publication.sid in self._listening:
            return
        hearing = self._wanted(participant)
        if hearing == "ignore":
            return
        speaker = participant.identity
        task = asyncio.ensure_future(self._listen(track, publication.sid, speaker, hearing))
        self._listening[publication.sid] = task
        self._speaker_of[publication.sid] = speaker
        log.info("voice_listening", room=self.room_id, participant=speaker, hearing=hearing)

    def _on_unsubscribed(
        self,
        _track: rtc.Track,
        publication: rtc.RemoteTrackPublication,
        _participant: rtc.RemoteParticipant,
    ) -> None:
        self._stop(publication.sid)

    def _on_disconnected(self, participant: rtc.RemoteParticipant) -> None:
        self._elsewhere.discard(participant.identity)
        for sid, who in list(self._speaker_of.items()):
            if who == participant.identity:
                self._stop(sid)

    def _stop(self, sid: str) -> None:
        task = self._listening.pop(sid, None)
        self._speaker_of.pop(sid, None)
        if task is not None:
            task.cancel()

    async def _listen(self, track: rtc.Track, sid: str, speaker: str, hearing: Hearing) -> None:
        audio = rtc.AudioStream(track, sample_rate=SAMPLE_RATE, num_channels=1)
        stream = self._engine.stream()

        async def pump() -> None:
            async for event in audio:
                stream.push_frame(event.frame)
            stream.end_input()

        pumping = asyncio.ensure_future(pump())
        segment: str | None = None
        try:
            async for ev in stream:
                text = ev.alternatives[0].text.strip() if ev.alternatives else ""
                if ev.type == stt.SpeechEventType.INTERIM_TRANSCRIPT and text:
                    segment = segment or new_segment_id()
                    if hearing == "prompt" and self._on_interim is not None:
                        self._on_interim(speaker, text)
                    await self.caption(speaker, sid, segment, text, final=False)
                elif ev.type == stt.SpeechEventType.FINAL_TRANSCRIPT and text:
                    segment, final_segment = None, segment or new_segment_id()
                    self.finals += 1
                    if hearing == "prompt":
                        ended = ev.speech_end_time or time.time()
                        self._spawn(self._on_final(speaker, text, ended))
                    await self.caption(speaker, sid, final_segment, text, final=True)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # one microphone's failure never stops the room
            log.error(
                "voice_stream_failed", room=self.room_id, participant=speaker, error=repr(err)
            )
        finally:
            pumping.cancel()
            await asyncio.gather(pumping, return_exceptions=True)
            await audio.aclose()
            await stream.aclose()
            if self._listening.get(sid) is asyncio.current_task():
                self._listening.pop(sid, None)
                self._speaker_of.pop(sid, None)

    async def caption(
        self, speaker: str, sid: str, segment: str, text: str, *, final: bool
    ) -> None:
        if self._may_speak is not None and not await self._may_speak(TOPIC_TRANSCRIPTION):
            return
        try:
            await publish_caption(
                self.room.local_participant,
                speaker=speaker,
                track_sid=sid,
                segment_id=segment,
                text=text,
                final=final,
            )
        except Exception as err:  # a caption lost is not worth the stream
            log.warning("caption_failed", room=self.room_id, participant=speaker, error=repr(err))

    def _spawn(self, coro: Awaitable[None]) -> None:
        self._tasks.spawn(coro)
