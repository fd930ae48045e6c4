"""StreamInbox: a stream for a request given up on is a late stream (no strike), any other
unexpected stream is refused as `unexpected_stream`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from steward.protocol.names import (
    STREAM_ATTR_REQUEST_ID,
    TOPIC_ACK,
    TOPIC_CONTEXT,
    TOPIC_TRANSCRIPTION,
)
from steward.room.inbound.abuse import STREAM_STRIKE, AbuseGuard
from steward.room.inbound.stream_inbox import (
    GIVEN_UP_KEPT,
    STREAM_OPEN_BYTES,
    StreamInbox,
    StreamMeter,
)


@dataclass
class Info:
    attributes: dict[str, str]
    mime_type: str = "application/json"
    size: int = 100


@dataclass
class Reader:
    info: Info
    closed: bool = field(default=False)

    def close(self) -> None:
        self.closed = True


def _reader(request_id: str) -> Any:
    return Reader(Info({STREAM_ATTR_REQUEST_ID: request_id}))


async def test_late_streams_of_given_up_requests_are_not_strikes() -> None:
    rejected: list[tuple[str, str, str]] = []
    revoked: list[str] = []

    async def revoke(identity: str) -> None:
        revoked.append(identity)

    guard = AbuseGuard("r", revoke, limit_per_min=1)

    def on_reject(
        topic: str, sender: str, reason: str, detail: str = "", size: int | None = None
    ) -> None:
        rejected.append((topic, sender, reason))
        guard.strike(sender, reason, weight=STREAM_STRIKE)

    inbox = StreamInbox(on_reject, inherit_s=0)  # long past its start: nothing inherited
    inbox.expect("q1", "ann", ["shapes"])
    inbox.discard("q1")  # the steward gave up on it
    handle = inbox.handler(TOPIC_CONTEXT)
    late, stray, forged = _reader("q1"), _reader("q-never"), _reader("q1")
    handle(late, "ann")
    await asyncio.sleep(0.01)
    assert rejected == [(TOPIC_CONTEXT, "ann", "late_stream")] and late.closed
    assert "ann" not in guard.muted
    handle(forged, "eve")  # another sender naming ann's old request: a strike
    handle(stray, "ann")  # a request never made: a strike
    await asyncio.sleep(0.01)
    assert rejected[1:] == [
        (TOPIC_CONTEXT, "eve", "unexpected_stream"),
        (TOPIC_CONTEXT, "ann", "unexpected_stream"),
    ]
    assert {"eve", "ann"} <= guard.muted


async def test_answers_to_a_predecessors_requests_are_late_not_strikes() -> None:
    """A steward that took the room over meets answers to requests its predecessor made."""
    rejected: list[tuple[str, str, str]] = []
    inbox = StreamInbox(
        lambda topic, sender, reason, detail="", size=None: rejected.append((topic, sender, reason))
    )
    inbox.expect("mine", "ann", ["shapes"])
    inbox.discard("mine")
    handle = inbox.handler(TOPIC_CONTEXT)
    predecessor, forged = _reader("asked-by-the-dead-steward"), _reader("mine")
    handle(predecessor, "ann")
    handle(forged, "eve")  # a request this steward made, answered by another: still refused
    await asyncio.sleep(0.01)
    assert rejected == [
        (TOPIC_CONTEXT, "ann", "late_stream"),
        (TOPIC_CONTEXT, "eve", "unexpected_stream"),
    ]
    assert predecessor.closed and forged.closed


async def test_given_up_requests_are_remembered_boundedly() -> None:
    reasons: list[str] = []
    inbox = StreamInbox(lambda topic, sender, reason, detail="", size=None: reasons.append(reason))
    for i in range(GIVEN_UP_KEPT + 10):
        inbox.expect(f"q{i}", "ann", ["shapes"])
        inbox.discard(f"q{i}")
    handle = inbox.handler(TOPIC_CONTEXT)
    handle(_reader("q0"), "ann")  # forgotten: the oldest went first
    await asyncio.sleep(0.01)
    handle(_reader(f"q{GIVEN_UP_KEPT + 9}"), "ann")
    await asyncio.sleep(0.01)
    assert reasons == ["unexpected_stream", "late_stream"]


@dataclass
class _Handle:
    id: int


@dataclass
class _HeaderInfo:
    topic: str
    total_length: int
    attributes: dict[str, str] = field(default_factory=dict)

    def HasField(self, name: str) -> bool:  # protobuf's name
        return name == "total_length" and self.total_length > 0


@dataclass
class _OwnedReader:
    info: _HeaderInfo
    handle: _Handle = field(default_factory=lambda: _Handle(0))


@dataclass
class _Opened:
    reader: _OwnedReader
    participant_identity: str


class _Room:
    """The SDK room's stream-opening hooks the inbox wraps: records what reached a reader."""

    def __init__(self) -> None:
        self.readers: list[tuple[str, str]] = []
        self._byte_stream_handlers: dict[str, Any] = {"agent:context": object()}
        self._text_stream_handlers: dict[str, Any] = {"lk.transcription": object()}

    def _handle_byte_stream_opened(self, event: _Opened) -> None:
        self.readers.append(("byte", event.reader.info.topic))

    def _handle_text_stream_opened(self, event: _Opened) -> None:
        self.readers.append(("text", event.reader.info.topic))

    def open_byte(self, event: _Opened) -> None:
        """What the SDK does on a byte stream's header (through the inbox's wrapper)."""
        self._handle_byte_stream_opened(event)

    def open_text(self, event: _Opened) -> None:
        self._handle_text_stream_opened(event)


def _opened(topic: str, sender: str, size: int, request_id: str = "") -> Any:
    attrs = {STREAM_ATTR_REQUEST_ID: request_id} if request_id else {}
    return _Opened(_OwnedReader(_HeaderInfo(topic, size, attrs)), sender)


async def test_streams_refused_at_their_header_never_get_a_reader() -> None:
    rejected: list[tuple[str, str, str, int | None]] = []
    charged: list[tuple[str, int]] = []

    def on_reject(
        topic: str, sender: str, reason: str, detail: str = "", size: int | None = None
    ) -> None:
        rejected.append((topic, sender, reason, size))

    def charge(sender: str, nbytes: int) -> bool:
        charged.append((sender, nbytes))
        return True

    inbox = StreamInbox(on_reject, StreamMeter(muted=lambda s: s == "mal", charge=charge))
    room = _Room()
    inbox.handler(TOPIC_CONTEXT)
    inbox.refuse(TOPIC_ACK, "byte")
    inbox.catch_unhandled(room)  # type: ignore[arg-type]
    inbox.expect("q1", "ann", ["shapes"])
    byte, text = room.open_byte, room.open_text
    byte(_opened(TOPIC_CONTEXT, "ann", 100, "q1"))  # asked for: read
    byte(_opened(TOPIC_CONTEXT, "eve", 5 << 20, "q1"))  # not hers to answer
    byte(_opened(TOPIC_ACK, "eve", 100_000))  # never a stream
    byte(_opened(TOPIC_ACK, "eve", 1000))  # small: its reader counts it (the size may lie)
    byte(_opened("app:files", "eve", 3 << 20))  # another app's: metered only
    byte(_opened("app:files", "eve", 0))  # size not announced: drained by a reader
    byte(_opened(TOPIC_CONTEXT, "mal", 100, "q1"))  # muted
    text(_opened(TOPIC_TRANSCRIPTION, "ann", 10))  # captions: read by their handler
    assert room.readers == [
        ("byte", TOPIC_CONTEXT),
        ("byte", TOPIC_ACK),
        ("byte", "app:files"),
        ("text", TOPIC_TRANSCRIPTION),
    ]
    assert rejected == [
        (TOPIC_CONTEXT, "eve", "unexpected_stream", 5 << 20),
        (TOPIC_ACK, "eve", "unexpected_stream", 100_000),
    ]
    # Another app's streams cost their opening as well as their bytes.
    opening = STREAM_OPEN_BYTES
    assert charged == [
        ("eve", 5 << 20),
        ("eve", 100_000),
        ("eve", opening),
        ("eve", 3 << 20),
        ("eve", opening),
    ]
