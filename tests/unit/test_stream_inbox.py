"""StreamInbox: a stream for a request given up on is a late stream (no strike), any other
unexpected stream is refused as `unexpected_stream`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from steward.protocol.names import STREAM_ATTR_REQUEST_ID, TOPIC_CONTEXT
from steward.room.abuse import STREAM_STRIKE, AbuseGuard
from steward.room.stream_inbox import GIVEN_UP_KEPT, StreamInbox


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

    inbox = StreamInbox(on_reject)
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
