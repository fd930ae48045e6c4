"""Byte streams from browsers on `agent:screenshot` / `agent:context`, matched to context
requests by id: the inbox, its capped gzip inflater, and the errors an attempt fails with.

Every stream that reaches the steward, on any topic, is metered against its sender's inbound
budget (`budget`), what the steward does not read as unread bytes: by its announced size
when that is `DRAIN_BELOW` or more, else chunk by chunk while it is drained (a small size
may be a lie; one sending past it mutes its sender); a muted sender's streams are closed at
their header, unread. Streams on topics nobody registered (another app's) are caught too
(`catch_unhandled`), never read, their opening charged `STREAM_OPEN_BYTES`.

A stream refused at its header (muted sender, unasked or another app's announcing
`DRAIN_BELOW` or more) is dropped before the SDK makes a reader of it: a reader, even closed
at once, has the native side deliver every chunk across the FFI (a 5 MiB stream is hundreds
of events parsed in Python, on the event loop the room's other work shares); a dropped
handle's chunks are discarded natively, as the SDK does for a topic with no handler.

The fuzzers drive `Inflater` and `parse_shapes` directly, so their names are public.
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from livekit import rtc
from livekit.rtc._ffi_client import FfiHandle

from steward.obs.logging import get_logger
from steward.obs.stage_hooks import Stage, StageHooks
from steward.protocol.images import matches, screenshot_type
from steward.protocol.limits import MAX_SCREENSHOT_BYTES, MAX_SHAPES_JSON_BYTES
from steward.protocol.names import (
    SHAPES_TYPE_GZIP,
    SHAPES_TYPE_JSON,
    STEWARD_TOPICS,
    STREAM_ATTR_REQUEST_ID,
    TOPIC_CONTEXT,
    TOPIC_SCREENSHOT,
)
from steward.task_set import TaskSet

log = get_logger(__name__)

STREAM_KINDS = {TOPIC_SCREENSHOT: "screenshot", TOPIC_CONTEXT: "shapes"}
# Streams announcing less than this (or nothing) get a reader whatever their topic, to be
# counted chunk by chunk; larger ones are charged their announced size at their header.
DRAIN_BELOW = 64 * 1024
# What opening a stream on a topic with no handler costs its sender's unread allowance, its
# bytes aside: a flood spread over many streams is counted from their headers, which reach
# the steward first, not only from chunks that queue behind them.
STREAM_OPEN_BYTES = 4096
# How the SDK ends a stream that sent more than its header announced.
OVERRAN = "exceeded total length"
STREAM_CAPS = {"screenshot": MAX_SCREENSHOT_BYTES, "shapes": MAX_SHAPES_JSON_BYTES}


class ContextFailure(Exception):
    """One attempt at one browser failed (timeout, RPC error, bad reply, missing stream)."""


class ContextRefused(ContextFailure):
    """The browser sent what no retry would fix (over its byte budget, a corrupt or bomb
    gzip, the wrong image type): that browser is not asked again for this run."""


class ContextLate(ContextFailure):
    """The browser did not answer (or stream) in time: asking it again would spend the
    fetch's budget on the slowest browser while another could answer."""


# Refusals of a stream's content (not of its timing): never retried at the same browser.
_REFUSALS = frozenset({"oversize", "corrupt_gzip", "unsupported_image_type", "image_type_mismatch"})


@dataclass(frozen=True)
class Received:
    """One whole byte stream: its bytes and the media type it was sent as."""

    data: bytes
    mime_type: str


# Ids of requests given up on that are remembered, for their late streams.
GIVEN_UP_KEPT = 256
# How long after a steward starts in a room an answer to a request it never made counts as
# its predecessor's (a dead worker's, a restarted steward's): well past a context timeout.
PREDECESSOR_ANSWERS_S = 30.0


@dataclass
class _Expected:
    sender: str
    futures: dict[str, asyncio.Future[Received]]
    # Byte caps the steward asked for (the screenshot's maxBytes), under STREAM_CAPS.
    caps: dict[str, int] = field(default_factory=dict)


class Oversize(Exception):
    """The stream (or what it inflates to) is over its cap."""


class CorruptGzip(Exception):
    """A stream sent as gzip that does not inflate to one whole gzip member."""


class Inflater:
    """Streaming gunzip whose output never exceeds `cap` bytes: a zip bomb is refused after
    at most `cap + 1` inflated bytes, never held whole."""

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._z = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip wrapper only
        self.out = bytearray()

    def feed(self, chunk: bytes) -> None:
        data = chunk
        while data:
            if self._z.eof:
                raise CorruptGzip("data after the end of the gzip member")
            try:
                # max_length > 0 always (an over-cap output raised below): 0 means unbounded.
                self.out += self._z.decompress(data, self._cap + 1 - len(self.out))
            except zlib.error as err:
                raise CorruptGzip(str(err)) from err
            if len(self.out) > self._cap:
                raise Oversize(f"inflates to over {self._cap} bytes")
            data = self._z.unconsumed_tail
        if self._z.unused_data:
            raise CorruptGzip("data after the end of the gzip member")

    def finish(self) -> bytes:
        if not self._z.eof:
            raise CorruptGzip("truncated gzip stream")
        return bytes(self.out)


def shapes_encoding(mime_type: str) -> str:
    """`gzip` when the shapes stream says it is gzip-compressed JSON, else `json` (plain JSON
    is what older browsers and clients send, labelled or not)."""
    base = mime_type.split(";", 1)[0].strip().lower()
    return "gzip" if base == SHAPES_TYPE_GZIP else "json"


class StreamMeter:
    """What the inbox asks of the room about a stream's sender: whether it is muted, and to
    count an arrival against its inbound budget (False: over it), as read or unread bytes."""

    def __init__(
        self,
        muted: Callable[[str], bool] = lambda _sender: False,
        charge: Callable[[str, int], bool] = lambda _sender, _nbytes: True,
        charge_unread: Callable[[str, int], bool] | None = None,
    ) -> None:
        self.muted = muted
        self.charge = charge
        self.charge_unread = charge_unread if charge_unread is not None else charge


AnyReader = rtc.ByteStreamReader | rtc.TextStreamReader


class _WithFallback(dict[str, Any]):
    """A room's stream handlers by topic, answering `fallback` for every topic no one
    registered (the SDK looks handlers up with `.get` and drops the rest unseen)."""

    def __init__(self, handlers: dict[str, Any], fallback: Any) -> None:
        super().__init__(handlers)
        self.fallback = fallback

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key, self.fallback)


class StreamInbox:
    """Byte streams on `agent:screenshot` / `agent:context`, matched to requests by id.

    A screenshot must be sent as an accepted image type (`steward.protocol.images`) and its
    bytes must match that type; anything else fails the request like a missing screenshot.
    Shapes arrive as JSON, gzip-compressed when the stream's mimeType is `application/gzip`:
    inflated as it arrives, capped at MAX_SHAPES_JSON_BYTES inflated (`oversize`), a corrupt
    one refused (`corrupt_gzip`); either fails the attempt like invalid shapes JSON."""

    def __init__(
        self,
        on_reject: Callable[..., None],
        meter: StreamMeter | None = None,
        *,
        inherit_s: float = PREDECESSOR_ANSWERS_S,
    ) -> None:
        self.meter = meter if meter is not None else StreamMeter()
        self._expected: dict[str, _Expected] = {}
        # Requests given up on (timed out, superseded), by id: their sender's late streams
        # are closed unread but are no one's fault, so they are not strikes. Bounded.
        self._given_up: OrderedDict[str, str] = OrderedDict()
        # A steward that takes a room over (failover, restart) meets the answers its
        # predecessor asked for: ids it never issued, from honest browsers. For a while after
        # it starts, such answers are late, not hostile: closed, metered as read, no strikes.
        self._inherits_until = time.monotonic() + inherit_s
        self._issued: set[str] = set()
        self._tasks = TaskSet("context_stream_task_failed")
        self.hooks = StageHooks()
        self._on_reject = on_reject
        # (topic, "byte" | "text") refused whatever they carry; topics read when asked for.
        self._refusing: set[tuple[str, str]] = set()
        self._reading: set[str] = set()

    def _late(self, request_id: str, sender: str) -> bool:
        """An answer to a request given up on, or to one a predecessor asked for."""
        if self._given_up.get(request_id) == sender:
            return True
        inherited = time.monotonic() < self._inherits_until and request_id not in self._issued
        return inherited and bool(request_id)

    def expect(
        self, request_id: str, sender: str, kinds: list[str], caps: dict[str, int] | None = None
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        futures: dict[str, asyncio.Future[Received]] = {k: loop.create_future() for k in kinds}
        self._expected[request_id] = _Expected(sender, futures, dict(caps or {}))
        if time.monotonic() < self._inherits_until:  # bounded: only while inheriting
            self._issued.add(request_id)
        return futures

    def refuse(
        self, topic: str, kind: str
    ) -> Callable[[rtc.ByteStreamReader | rtc.TextStreamReader, str], None]:
        """A handler that refuses every stream of `kind` on `topic` unread, with a log line."""
        self._refusing.add((topic, kind))

        def on_stream(reader: AnyReader, sender: str) -> None:
            if self.meter.muted(sender):
                reader.close()
                return
            self._refuse_stream(topic, reader, sender, "unexpected_stream", f"{kind} stream")

        return on_stream

    def unhandled(self, reader: AnyReader, sender: str) -> None:
        """A stream on a topic the steward does not speak (another app's): never read, never
        a refusal, but metered like everything else its sender sends."""
        if self.meter.muted(sender):
            reader.close()
            return
        self._meter_unread(reader, sender)

    def attach(
        self, room: rtc.Room, texts: dict[str, Callable[[rtc.TextStreamReader, str], None]]
    ) -> None:
        """Register every stream handler of the room: the context answers read here, the text
        topics in `texts` read by their handler, every other stream on our topics refused
        unread (the SDK would otherwise drop it without a word, or the other kind would be
        read on a topic that expects one), and, last, streams on every other topic metered
        and closed unread."""
        for topic in (TOPIC_SCREENSHOT, TOPIC_CONTEXT):
            room.register_byte_stream_handler(topic, self.handler(topic))
        for topic, on_text in texts.items():
            room.register_text_stream_handler(topic, on_text)
        for topic in STEWARD_TOPICS:
            if topic not in (TOPIC_SCREENSHOT, TOPIC_CONTEXT):
                room.register_byte_stream_handler(topic, self.refuse(topic, "byte"))
            if topic not in texts:
                room.register_text_stream_handler(topic, self.refuse(topic, "text"))
        self.catch_unhandled(room)

    def catch_unhandled(self, room: rtc.Room) -> None:
        """Route streams on every topic no handler was registered for to `unhandled` (after
        the last registration: the SDK refuses to register a topic that has a handler)."""
        for attr in ("_byte_stream_handlers", "_text_stream_handlers"):
            handlers = getattr(room, attr, None)
            if not isinstance(handlers, dict):
                log.warning("unhandled_streams_uncounted", attribute=attr)
                continue
            setattr(room, attr, _WithFallback(handlers, self.unhandled))
        self._refuse_at_header(room)

    def _refuse_at_header(self, room: rtc.Room) -> None:
        """Decide on each stream from its header, before the SDK makes a reader of it; one
        refused there has its native handle dropped (its chunks never cross the FFI)."""
        for attr, kind, handlers in (
            ("_handle_byte_stream_opened", "byte", "_byte_stream_handlers"),
            ("_handle_text_stream_opened", "text", "_text_stream_handlers"),
        ):
            sdk_opened = getattr(room, attr, None)
            if not callable(sdk_opened):  # streams still refused, by their readers
                log.warning("streams_refused_by_reader", attribute=attr)
                continue

            def opened(
                event: Any,
                sdk_opened: Callable[[Any], None] = sdk_opened,
                kind: str = kind,
                handlers: str = handlers,
            ) -> None:
                info, sender = event.reader.info, event.participant_identity
                size = info.total_length if info.HasField("total_length") else 0
                registered = info.topic in dict.keys(getattr(room, handlers, {}))
                try:
                    refused = self._refused(
                        kind, info.topic, sender, size, dict(info.attributes), registered
                    )
                except Exception:  # never the room's event listener: its reader decides
                    log.exception("stream_header_check_failed", topic=info.topic[:64])
                    refused = False
                if refused:
                    FfiHandle(event.reader.handle.id).dispose()
                    return
                sdk_opened(event)

            setattr(room, attr, opened)

    def _refused(
        self, kind: str, topic: str, sender: str, size: int, attrs: dict[str, str], registered: bool
    ) -> bool:
        """Refuse (and account for) a stream from its header alone; False: make a reader."""
        if self.meter.muted(sender):
            return True
        ours = (topic, kind) in self._refusing or (kind == "byte" and topic in self._reading)
        if not registered and not ours:  # no handler: its opening alone costs unread bytes
            self.meter.charge_unread(sender, STREAM_OPEN_BYTES)
            if self.meter.muted(sender):
                return True
        if size < DRAIN_BELOW:
            return False  # not announced, or small: drained by its reader to be metered
        if (topic, kind) in self._refusing:
            self._on_reject(topic, sender, "unexpected_stream", f"{kind} stream", size=size)
        elif kind == "byte" and topic in self._reading:
            request_id = attrs.get(STREAM_ATTR_REQUEST_ID, "")
            expected = self._expected.get(request_id)
            if (
                expected is not None
                and expected.sender == sender
                and STREAM_KINDS[topic] in expected.futures
            ):
                return False
            late = expected is None and self._late(request_id, sender)
            self._on_reject(
                topic, sender, "late_stream" if late else "unexpected_stream", "", size=size
            )
            if late:  # an answer the steward gave up on: counted as what it asked for
                self.meter.charge(sender, size)
                return True
        elif registered:
            return False  # read by its handler (captions)
        self.meter.charge_unread(sender, size)
        return True

    def _refuse_stream(
        self, topic: str, reader: AnyReader, sender: str, reason: str, detail: str = ""
    ) -> None:
        size = reader.info.size or None
        self._on_reject(topic, sender, reason, detail, size=size)
        self._meter_unread(reader, sender, unread=reason != "late_stream")

    def _meter_unread(self, reader: AnyReader, sender: str, *, unread: bool = True) -> None:
        """Charge a stream that is not read to its sender: its announced size when that is
        large, closed at once; else drained chunk by chunk until it ends, its sender goes over
        budget or is muted (its bytes reach the steward either way: they must count, and a
        small announced size may be a lie the SDK only reveals at the chunk past it). A late
        answer (`unread` False) counts as what the steward asked for."""
        size = reader.info.size or 0
        charge = self.meter.charge_unread if unread else self.meter.charge
        if size >= DRAIN_BELOW:
            charge(sender, size)
            reader.close()
            return
        self._tasks.spawn(self._drain(reader, sender, charge))

    async def _drain(
        self, reader: AnyReader, sender: str, charge: Callable[[str, int], bool] | None = None
    ) -> None:
        charge = charge or self.meter.charge_unread
        try:
            async for chunk in reader:
                nbytes = len(chunk) if isinstance(chunk, bytes) else len(chunk.encode())
                if not charge(sender, nbytes) or self.meter.muted(sender):
                    break
        except rtc.StreamError as err:
            # Past its announced length: the SDK drops the rest natively, uncounted, so the
            # lie itself is what the sender is charged for. Otherwise aborted by the sender
            # or the room: nothing more to count.
            if OVERRAN in err.description and not self.meter.muted(sender):
                info = reader.info
                self._on_reject(info.topic, sender, "stream_overran", str(info.size))
        except Exception:  # the room went away mid-read: nothing more to count
            pass
        finally:
            reader.close()

    def holds(self, sender: str) -> bool:
        """Whether a stream from `sender` is still awaited."""
        return any(e.sender == sender for e in self._expected.values())

    def discard(self, request_id: str) -> None:
        expected = self._expected.pop(request_id, None)
        if expected is not None:
            self._given_up[request_id] = expected.sender
            while len(self._given_up) > GIVEN_UP_KEPT:
                self._given_up.popitem(last=False)
            for fut in expected.futures.values():
                if not fut.done():
                    fut.cancel()
                elif not fut.cancelled():
                    # A refused stream nobody waited for (not announced, or the request had
                    # already failed): its failure is logged; mark it seen for asyncio.
                    fut.exception()

    def handler(self, topic: str) -> Callable[[rtc.ByteStreamReader, str], None]:
        kind = STREAM_KINDS[topic]
        self._reading.add(topic)

        def on_stream(reader: rtc.ByteStreamReader, sender: str) -> None:
            if self.meter.muted(sender):
                reader.close()
                return
            request_id = (reader.info.attributes or {}).get(STREAM_ATTR_REQUEST_ID, "")
            read = self._read(kind, topic, reader, sender)
            self._tasks.spawn(
                self.hooks.timed(Stage.STREAM_READ, read, kind=kind, request_id=request_id)
            )

        return on_stream

    async def _read(self, kind: str, topic: str, reader: rtc.ByteStreamReader, sender: str) -> None:
        request_id = (reader.info.attributes or {}).get(STREAM_ATTR_REQUEST_ID, "")
        expected = self._expected.get(request_id)
        fut = expected.futures.get(kind) if expected is not None else None
        if expected is None or fut is None or expected.sender != sender:
            late = expected is None and self._late(request_id, sender)
            # Not read at all; closing also ends its SDK subscription.
            self._refuse_stream(
                topic, reader, sender, "late_stream" if late else "unexpected_stream"
            )
            return
        self.meter.charge(sender, 0)  # asked for: bounded by its own cap, one packet
        mime_type = reader.info.mime_type or ""
        if kind == "screenshot":
            media_type = screenshot_type(mime_type)
            if media_type is None:
                self._fail(fut, topic, sender, "unsupported_image_type", repr(mime_type[:64]))
                reader.close()
                return
            mime_type = media_type
        cap = min(STREAM_CAPS[kind], expected.caps.get(kind, STREAM_CAPS[kind]))
        declared = reader.info.size or 0
        if declared > cap:  # refused from its header, before a byte is read
            self._fail(fut, topic, sender, "oversize", f"{kind} stream announced {declared} bytes")
            self.meter.charge_unread(sender, declared - cap)  # what it sends past its cap
            reader.close()
            return
        inflater = None
        if kind == "shapes":
            if shapes_encoding(mime_type) == "gzip":
                inflater = Inflater(cap)
            mime_type = SHAPES_TYPE_JSON
        buf = bytearray()
        size = 0
        try:
            async for chunk in reader:
                size += len(chunk)
                if size > cap:
                    raise Oversize(f"{kind} stream over {cap} bytes")
                if inflater is None:
                    buf += chunk
                else:
                    inflater.feed(chunk)
            data = bytes(buf) if inflater is None else inflater.finish()
        except Oversize as err:
            self._fail(fut, topic, sender, "oversize", str(err))
            self._tasks.spawn(self._drain(reader, sender))  # the rest: unread, counted
            return
        except CorruptGzip as err:
            self._fail(fut, topic, sender, "corrupt_gzip", str(err))
            reader.close()
            return
        except Exception as err:
            self._on_reject(topic, sender, "stream_failed", str(err))
            if not fut.done():
                fut.set_exception(ContextFailure(f"{kind} stream failed: {err}"))
            return
        if kind == "screenshot" and not matches(mime_type, data):
            self._fail(fut, topic, sender, "image_type_mismatch", f"not {mime_type}")
            return
        if not fut.done():
            fut.set_result(Received(data, mime_type))

    def _fail(
        self, fut: asyncio.Future[Received], topic: str, sender: str, reason: str, detail: str
    ) -> None:
        self._on_reject(topic, sender, reason, detail)
        if not fut.done():
            failure = ContextRefused if reason in _REFUSALS else ContextFailure
            fut.set_exception(failure(f"{reason}: {detail}"))


def parse_shapes(data: bytes) -> list[dict[str, Any]]:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as err:  # RecursionError: absurdly deep nesting
        raise ContextFailure(f"shapes JSON invalid: {err}") from err
    if not isinstance(value, list) or not all(isinstance(s, dict) for s in value):
        raise ContextFailure("shapes JSON is not a list of objects")
    return value
