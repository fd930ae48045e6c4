"""A participant's microphone played from a WAV file, in real time (tests, bench, demo)."""

from __future__ import annotations

import time
from pathlib import Path

from livekit import rtc

from steward.voice.local_stt import SAMPLE_RATE
from steward_tools.voice.speech import read_pcm

FRAME_MS = 20
_FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000
# The native source plays its queue out in real time whatever the event loop does. A queue as
# long as any file we play means a busy loop (the steward under test shares it) can fall
# behind by seconds without starving the track: with 200 ms, a stall of the loop became a
# gap in the speech, which split an utterance and made the recogniser hear other words.
QUEUE_MS = 15_000


class WavMicrophone:
    """Publishes a microphone track on `room`; `play` sends a file at real-time pace."""

    def __init__(self, room: rtc.Room) -> None:
        self.room = room
        self.source = rtc.AudioSource(SAMPLE_RATE, 1, queue_size_ms=QUEUE_MS)
        self.track = rtc.LocalAudioTrack.create_audio_track("microphone", self.source)
        self.publication: rtc.LocalTrackPublication | None = None

    async def publish(self) -> str:
        options = rtc.TrackPublishOptions(source=rtc.TrackSource.SOURCE_MICROPHONE)
        self.publication = await self.room.local_participant.publish_track(self.track, options)
        return str(self.publication.sid)

    async def play(
        self, path: Path, *, speech_end_s: float | None = None, until_s: float | None = None
    ) -> float | None:
        """Send the file (up to `until_s`); returns when (time.monotonic) its
        `speech_end_s` went out."""
        pcm = read_pcm(path)
        if until_s is not None:
            pcm = pcm[: int(until_s * SAMPLE_RATE) * 2]
        step = _FRAME_SAMPLES * 2
        ended_at: float | None = None
        end_byte = None if speech_end_s is None else int(speech_end_s * SAMPLE_RATE) * 2
        for i in range(0, len(pcm), step):
            chunk = pcm[i : i + step].ljust(step, b"\0")
            await self.source.capture_frame(rtc.AudioFrame(chunk, SAMPLE_RATE, 1, _FRAME_SAMPLES))
            if end_byte is not None and ended_at is None and i + step >= end_byte:
                # capture_frame returns once the frame is queued: it goes out after the queue.
                ended_at = time.monotonic() + self.source.queued_duration
        await self.source.wait_for_playout()
        return ended_at

    async def silence(self, seconds: float) -> None:
        frame = rtc.AudioFrame(b"\0" * _FRAME_SAMPLES * 2, SAMPLE_RATE, 1, _FRAME_SAMPLES)
        for _ in range(int(seconds * 1000 / FRAME_MS)):
            await self.source.capture_frame(frame)

    async def close(self) -> None:
        await self.source.aclose()
