"""Rigs for the context path without LiveKit: a stream as the SDK hands it over, a stream
inbox fed by the test, and a browser answering `steward.context` for a snapshot fetcher."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from livekit import rtc

from steward.canvas.mirror import CanvasMirror
from steward.protocol.box import Box
from steward.protocol.messages import ContextCounts, ContextReply
from steward.protocol.names import (
    ATTR_CAPABILITIES,
    STREAM_ATTR_REQUEST_ID,
    TOPIC_CONTEXT,
    TOPIC_SCREENSHOT,
)
from steward.room.context.snapshot_fetcher import SnapshotFetcher
from steward.room.inbound.stream_inbox import Received, StreamInbox
from steward.room.participants import Participants

WEBP = b"RIFF\x04\x00\x00\x00WEBPVP8 "


class FakeReader:
    """A byte stream as the SDK hands it over: info, chunks, close()."""

    def __init__(self, request_id: str, mime_type: str, data: bytes) -> None:
        attrs = {STREAM_ATTR_REQUEST_ID: request_id}
        self.info = SimpleNamespace(attributes=attrs, mime_type=mime_type, size=None)
        self.data = data
        self.read = False
        self.closed = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        self.read = True
        for i in range(0, len(self.data), 8):
            yield self.data[i : i + 8]

    def close(self) -> None:
        self.closed = True


def stream_to(
    inbox: StreamInbox, request_id: str, sender: str, topic: str, mime_type: str, data: bytes
) -> None:
    """Hands `data` to the inbox the way `sender`'s byte stream on `topic` arrives."""
    inbox.handler(topic)(FakeReader(request_id, mime_type, data), sender)  # type: ignore[arg-type]


class InboxRig:
    """A stream inbox fed one stream at a time by `deliver`, with the refusals it logged."""

    def __init__(self) -> None:
        self.rejected: list[tuple[str, str, str]] = []
        self.inbox = StreamInbox(
            lambda topic, sender, reason, *_: self.rejected.append((topic, sender, reason))
        )

    async def deliver(
        self, mime_type: str, data: bytes, topic: str = TOPIC_SCREENSHOT
    ) -> tuple[asyncio.Future[Received], FakeReader]:
        futures = self.inbox.expect("r1", "alice", ["screenshot", "shapes"])
        reader = FakeReader("r1", mime_type, data)
        self.inbox.handler(topic)(reader, "alice")  # type: ignore[arg-type]
        kind = "screenshot" if topic == TOPIC_SCREENSHOT else "shapes"
        fut: asyncio.Future[Received] = futures[kind]
        await asyncio.wait([fut], timeout=5)  # the inbox reads in a task of its own
        return fut, reader


class FakeHost:
    """Answers `steward.context` like a browser; `gate` holds replies until the test opens it."""

    def __init__(self, inbox: StreamInbox) -> None:
        self.inbox = inbox
        self.calls: list[dict[str, Any]] = []
        self.gate: asyncio.Event | None = None
        self.fail = False
        self.doc_version = 1

    async def perform_rpc(self, *, destination_identity: str, payload: str, **_: Any) -> str:
        req = json.loads(payload)
        self.calls.append(req)
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise rtc.RpcError(1500, "context unavailable")
        rid = req["requestId"]
        shapes = b'[{"id": "a", "type": "geo", "x": 0, "y": 0}]'
        stream_to(self.inbox, rid, destination_identity, TOPIC_CONTEXT, "application/json", shapes)
        stream_to(self.inbox, rid, destination_identity, TOPIC_SCREENSHOT, "image/webp", WEBP)
        reply = ContextReply(
            request_id=rid,
            viewport=Box(x=0, y=0, w=1280, h=800),
            doc_version=self.doc_version,
            counts=ContextCounts(shapes=1),
            streams=["screenshot", "shapes"],
        )
        return reply.to_wire().decode()


class FetchRig:
    """A snapshot fetcher over one `FakeHost` browser (alice), its clock and room version held
    by the test."""

    def __init__(self, *, host: bool = True, prefetch_ttl_s: float = 15.0) -> None:
        self.now = 100.0
        self.version = 0
        self.participants = Participants()
        if host:
            caps = {ATTR_CAPABILITIES: "context,screenshot,apply"}
            self.participants.joined("alice", 1, caps)
        self.participants.joined("bob", 2, {})
        self.inbox = StreamInbox(lambda *a: None)
        self.host = FakeHost(self.inbox)
        self.fetcher = SnapshotFetcher(
            "room",
            self.host.perform_rpc,
            self.participants,
            self.inbox,
            CanvasMirror(),
            lambda: self.version,
            timeout_s=0.5,
            attempts=1,
            prefetch_ttl_s=prefetch_ttl_s,
            clock=lambda: self.now,
        )

    async def prefetched(self, bounds: Box | None = None, asker: str | None = None) -> None:
        assert self.fetcher.prefetch(bounds, asker=asker) == "started"
        for task in list(self.fetcher.cache.prefetches):
            await task
