"""Captions: what a speaker said, as `lk.transcription` text streams to the whole room.

The attributes are the ones LiveKit's own agents put on user transcripts, so any LiveKit
front end shows them: `lk.segment_id` (interim updates and the final share it),
`lk.transcribed_track_id` (the speaker's microphone track) and `lk.transcription_final`.
The stream is sent on the speaker's behalf (`sender_identity`), as LiveKit agents do.
"""

from __future__ import annotations

import uuid

from livekit import rtc
from livekit.agents.types import (
    ATTRIBUTE_TRANSCRIPTION_FINAL,
    ATTRIBUTE_TRANSCRIPTION_SEGMENT_ID,
    ATTRIBUTE_TRANSCRIPTION_TRACK_ID,
)

from steward.protocol.names import TOPIC_TRANSCRIPTION


def new_segment_id() -> str:
    return f"SG_{uuid.uuid4().hex[:12]}"


def caption_attributes(segment_id: str, track_sid: str, *, final: bool) -> dict[str, str]:
    return {
        ATTRIBUTE_TRANSCRIPTION_SEGMENT_ID: segment_id,
        ATTRIBUTE_TRANSCRIPTION_TRACK_ID: track_sid,
        ATTRIBUTE_TRANSCRIPTION_FINAL: "true" if final else "false",
    }


async def publish_caption(
    participant: rtc.LocalParticipant,
    *,
    speaker: str,
    track_sid: str,
    segment_id: str,
    text: str,
    final: bool,
) -> None:
    writer = await participant.stream_text(
        topic=TOPIC_TRANSCRIPTION,
        attributes=caption_attributes(segment_id, track_sid, final=final),
        sender_identity=speaker,
    )
    await writer.write(text)
    await writer.aclose()
