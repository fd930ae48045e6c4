"""Context and screenshots from browsers: RPC `steward.context` plus correlated byte streams.

Whose view: a prompt's context is the asker's. The asker's own browser is asked first when
it offers context; else the host renders the asker's last published viewport (`Views`), and
the asker's published selection stands; then the other capable browsers. Each browser gets
bounded retries (tenacity, exponential backoff); when none delivers, the run goes on
text-only with the steward's mirror of the canvas and is logged as degraded. A prompt with
no browser behind it (HTTP, voice with no canvas open) gets the host's view, no selection,
and a `view_note` telling the model so. The asker's own edits since the agent last looked
ride along (`UserEdits` in relay mode; the asker's browser reports them in host mode).

A short-lived cache keyed by (asker, docVersion, bounds) answers repeated requests while
nothing was sent to the room since.

`prefetch` starts the same fetch in the background while a user composes a prompt (a
`steward:composing` hint): its result is cached longer (`prefetch_ttl_s`), a `fetch` for the
same key joins it while it is in flight, and it never degrades, raises or counts as a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from livekit import rtc
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from steward.canvas.mirror import CanvasMirror
from steward.obs import metrics
from steward.obs.logging import get_logger
from steward.ports import CanvasContext, ContextSource, PromptSource
from steward.protocol import ProtocolError, decode
from steward.protocol.images import matches, screenshot_type
from steward.protocol.limits import (
    MAX_RPC_PAYLOAD_BYTES,
    MAX_SCREENSHOT_BYTES,
    MAX_SHAPES_JSON_BYTES,
)
from steward.protocol.messages import Box, ContextPart, ContextReply, ContextRequest
from steward.protocol.names import (
    RPC_CONTEXT,
    SCREENSHOT_TYPE_JPEG,
    SHAPES_TYPE_GZIP,
    SHAPES_TYPE_JSON,
    STREAM_ATTR_REQUEST_ID,
    TOPIC_CONTEXT,
    TOPIC_SCREENSHOT,
)
from steward.room.participants import Participants
from steward.room.user_edits import UserEdits
from steward.room.views import ParticipantView, Views
from steward.tasks import TaskSet

log = get_logger(__name__)

DEFAULT_VIEWPORT = Box(x=0, y=0, w=1280, h=800)
STREAM_KINDS = {TOPIC_SCREENSHOT: "screenshot", TOPIC_CONTEXT: "shapes"}
STREAM_CAPS = {"screenshot": MAX_SCREENSHOT_BYTES, "shapes": MAX_SHAPES_JSON_BYTES}

PerformRpc = Callable[..., Awaitable[str]]
# A whole fetch (every candidate, every attempt) ends after this many `timeout_s`.
TOTAL_TIMEOUTS = 4
# Cached answers per room (different bounds, e.g. hints while the user pans).
MAX_CACHED = 8


class ContextFailure(Exception):
    """One attempt at one browser failed (timeout, RPC error, bad reply, missing stream)."""


class ContextRefused(ContextFailure):
    """The browser sent what no retry would fix (over its byte budget, a corrupt or bomb
    gzip, the wrong image type): that browser is not asked again for this run."""


# Refusals of a stream's content (not of its timing): never retried at the same browser.
_REFUSALS = frozenset({"oversize", "corrupt_gzip", "unsupported_image_type", "image_type_mismatch"})
# A browser whose answers failed this many fetches in a row loses the host role for a while.
DEMOTE_AFTER = 3
DEMOTE_S = 120.0


@dataclass(frozen=True)
class Received:
    """One whole byte stream: its bytes and the media type it was sent as."""

    data: bytes
    mime_type: str


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


class StreamInbox:
    """Byte streams on `agent:screenshot` / `agent:context`, matched to requests by id.

    A screenshot must be sent as an accepted image type (`steward.protocol.images`) and its
    bytes must match that type; anything else fails the request like a missing screenshot.
    Shapes arrive as JSON, gzip-compressed when the stream's mimeType is `application/gzip`:
    inflated as it arrives, capped at MAX_SHAPES_JSON_BYTES inflated (`oversize`), a corrupt
    one refused (`corrupt_gzip`); either fails the attempt like invalid shapes JSON."""

    def __init__(self, on_reject: Callable[..., None]) -> None:
        self._expected: dict[str, _Expected] = {}
        self._tasks = TaskSet("context_stream_task_failed")
        self._on_reject = on_reject

    def expect(
        self, request_id: str, sender: str, kinds: list[str], caps: dict[str, int] | None = None
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        futures: dict[str, asyncio.Future[Received]] = {k: loop.create_future() for k in kinds}
        self._expected[request_id] = _Expected(sender, futures, dict(caps or {}))
        return futures

    def refuse(
        self, topic: str, kind: str
    ) -> Callable[[rtc.ByteStreamReader | rtc.TextStreamReader, str], None]:
        """A handler that refuses every stream of `kind` on `topic` unread, with a log line."""

        def on_stream(reader: rtc.ByteStreamReader | rtc.TextStreamReader, sender: str) -> None:
            self._on_reject(topic, sender, "unexpected_stream", f"{kind} stream")
            reader.close()

        return on_stream

    def discard(self, request_id: str) -> None:
        expected = self._expected.pop(request_id, None)
        if expected is not None:
            for fut in expected.futures.values():
                if not fut.done():
                    fut.cancel()
                elif not fut.cancelled():
                    # A refused stream nobody waited for (not announced, or the request had
                    # already failed): its failure is logged; mark it seen for asyncio.
                    fut.exception()

    def handler(self, topic: str) -> Callable[[rtc.ByteStreamReader, str], None]:
        kind = STREAM_KINDS[topic]

        def on_stream(reader: rtc.ByteStreamReader, sender: str) -> None:
            self._tasks.spawn(self._read(kind, topic, reader, sender))

        return on_stream

    async def _read(self, kind: str, topic: str, reader: rtc.ByteStreamReader, sender: str) -> None:
        request_id = (reader.info.attributes or {}).get(STREAM_ATTR_REQUEST_ID, "")
        expected = self._expected.get(request_id)
        fut = expected.futures.get(kind) if expected is not None else None
        if expected is None or fut is None or expected.sender != sender:
            self._on_reject(topic, sender, "unexpected_stream")
            reader.close()  # not read at all; closing also ends its SDK subscription
            return
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
            reader.close()  # the rest is never read
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


@dataclass
class _Attempt:
    reply: ContextReply | None = None
    shapes: list[dict[str, Any]] | None = None
    screenshot: Received | None = None
    identity: str | None = None
    errors: list[str] = field(default_factory=list)


@dataclass
class _CacheEntry:
    context: CanvasContext
    at: float
    room_version: int
    ttl_s: float
    prefetched: bool = False
    # The asker's viewport and selection the answer was made for (None: not known).
    view: tuple[Box, tuple[str, ...]] | None = None
    # Browser-reported user changes go to the first request served only.
    changes_served: bool = False


# (asker or "", bounds as JSON or "", want_screenshot, the room's order counter at start)
_FlightKey = tuple[str, str, bool, int]
# (asker or "", docVersion, bounds as JSON or "", want_screenshot)
_CacheKey = tuple[str, int, str, bool]
PrefetchOutcome = Literal["started", "cached", "in_flight", "no_host"]


@dataclass(frozen=True)
class _Ask:
    """One candidate browser of a fetch and what to ask it for."""

    identity: str
    bounds: Box | None
    user_changes: bool = False  # host mode: the asker's own browser reports its edits


def view_note(source: PromptSource | None) -> str | None:
    """What the model is told when the view it gets is not the asker's (None: it is, or the
    run is the steward's own, e.g. a fairy's)."""
    if source is None or source == "system":
        return None
    if source == "http":
        why = "This request came over HTTP, with no browser behind it"
    elif source == "voice":
        why = "This request was spoken by someone with no canvas open"
    else:
        why = "The asker's browser did not share its view"
    return (
        f"{why}: the viewport and screenshot are the host's view of the canvas, not the "
        "asker's, and the asker's selection is unknown (nothing counts as selected)."
    )


class ContextFetcher:
    def __init__(
        self,
        room_id: str,
        perform_rpc: PerformRpc,
        participants: Participants,
        inbox: StreamInbox,
        mirror: CanvasMirror,
        room_version: Callable[[], int],
        *,
        timeout_s: float = 2.0,
        attempts: int = 2,
        cache_ttl_s: float = 2.0,
        prefetch_ttl_s: float | None = 15.0,  # None: as long as any cached answer
        max_size: int | None = None,
        max_bytes: int | None = None,
        on_reject: Callable[..., None] | None = None,
        clock: Callable[[], float] = time.monotonic,  # of cache ages only
        adopt_shapes: bool = False,
        views: Views | None = None,
        edits: UserEdits | None = None,
        browser_changes: bool = False,  # host mode: ask the asker's browser for its edits
    ) -> None:
        self.room_id = room_id
        self._clock = clock
        # (topic, sender, reason, detail): a host's reply or stream we refused, counted.
        self._on_reject = on_reject
        self._rpc = perform_rpc
        self._participants = participants
        self._inbox = inbox
        self._mirror = mirror
        # Host mode: user edits bypass the steward, so a fetched page replaces the mirror's.
        self._adopt_shapes = adopt_shapes
        self._room_version = room_version
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.cache_ttl_s = cache_ttl_s
        self.prefetch_ttl_s = cache_ttl_s if prefetch_ttl_s is None else prefetch_ttl_s
        self.max_size = max_size
        self.max_bytes = max_bytes
        self._views = views if views is not None else Views()
        self._edits = edits if edits is not None else UserEdits()
        self._browser_changes = browser_changes
        self._cache: dict[_CacheKey, _CacheEntry] = {}
        self._inflight: dict[str, set[asyncio.Task[str]]] = {}
        # Single flight per key: running prefetches (joined by `fetch`), and keys a `fetch`
        # of its own is loading (a prefetch for them would only duplicate it).
        self._prefetching: dict[_FlightKey, asyncio.Task[CanvasContext | None]] = {}
        self._fetching: dict[_FlightKey, int] = {}
        self.degraded_runs = 0
        self._failures: dict[str, int] = {}
        self.prefetch_stats = {"started": 0, "ok": 0, "failed": 0, "served": 0}

    def participant_left(self, identity: str) -> None:
        """Fail requests to a browser that left at once, instead of waiting for a timeout."""
        for task in self._inflight.pop(identity, set()):
            task.cancel()

    def candidates(self) -> list[str]:
        host = self._participants.host
        rest = [m.identity for m in self._participants.with_capability("context")]
        return ([host] if host else []) + [i for i in rest if i != host]

    def _own_browser(self, asker: str | None, want_screenshot: bool) -> str | None:
        """The asker, when its browser offers context (and a screenshot, when one is wanted)."""
        member = self._participants.get(asker) if asker else None
        if member is None or not member.has("context"):
            return None
        if member.identity in self._participants.demoted():
            return None
        if want_screenshot and not member.has("screenshot"):
            return None
        return member.identity

    def _plan(self, bounds: Box | None, want_screenshot: bool, asker: str | None) -> list[_Ask]:
        """The asker's own browser first; the others render the asker's viewport if known."""
        own = self._own_browser(asker, want_screenshot)
        view = self._views.get(asker)
        theirs = bounds if bounds is not None or view is None else view.viewport
        plan = [_Ask(own, bounds, self._browser_changes)] if own else []
        return plan + [_Ask(c, theirs) for c in self.candidates() if c != own]

    async def fetch(
        self,
        *,
        bounds: Box | None = None,
        want_screenshot: bool = True,
        asker: str | None = None,
        source: PromptSource | None = None,
    ) -> CanvasContext:
        """The context of one look at the canvas by a run for `asker` (None: no participant
        behind the prompt; `source` says why, for the note to the model)."""
        context = await self._fetch(bounds, want_screenshot, asker)
        return self._for_asker(context, asker, source)

    async def _fetch(
        self, bounds: Box | None, want_screenshot: bool, asker: str | None
    ) -> CanvasContext:
        started = time.monotonic()
        cached = self._cached(bounds, want_screenshot, asker)
        if cached is not None:
            result = "prefetched" if cached.source == "prefetched" else "cached"
            if result == "prefetched":
                self.prefetch_stats["served"] += 1
            metrics.CONTEXT_SECONDS.labels(result=result).observe(time.monotonic() - started)
            return cached
        key = self._flight_key(bounds, want_screenshot, asker)
        flight = self._prefetching.get(key)
        if flight is not None:
            # Shielded: a cancelled session must not cancel a prefetch others may join.
            joined = await asyncio.shield(flight)
            if joined is not None:
                self.prefetch_stats["served"] += 1
                metrics.CONTEXT_SECONDS.labels(result="prefetched").observe(
                    time.monotonic() - started
                )
                # The first to join takes its browser-reported changes; later ones do not.
                entry = self._entry(bounds, want_screenshot, asker)
                served = entry is not None and entry.context is joined and entry.changes_served
                if entry is not None and entry.context is joined:
                    entry.changes_served = True
                changes = [] if served else list(joined.user_changes)
                return replace(
                    joined, shapes=list(joined.shapes), user_changes=changes, source="prefetched"
                )
            # The prefetch found no answer: try again in full (and degrade if need be).
        best = _Attempt()
        view = self._views.get(asker)
        self._fetching[key] = self._fetching.get(key, 0) + 1
        try:
            got = await self._load(bounds, want_screenshot, asker, best)
        finally:
            self._fetching[key] -= 1
            if not self._fetching[key]:
                del self._fetching[key]
        if got is None:
            return self._degraded(best, bounds, started)
        context = self._context(got, bounds, degraded=False)
        if self._adopt_shapes and got.shapes is not None:
            self._mirror.load(got.shapes)
        self._store(
            context, bounds, want_screenshot, key[3], asker, _view_for(context, asker, view),
            prefetched=False,
        )  # fmt: skip
        metrics.CONTEXT_SECONDS.labels(result="ok").observe(time.monotonic() - started)
        return context

    def _for_asker(
        self, context: CanvasContext, asker: str | None, source: PromptSource | None
    ) -> CanvasContext:
        """The viewport and selection are the asker's; so are the user changes."""
        changes = context.user_changes if self._browser_changes else self._edits.take(asker)
        if asker is not None and context.source_identity == asker:
            return replace(context, asker=asker, user_changes=changes)
        view = self._views.get(asker)
        if view is not None:
            return replace(
                context,
                viewport=view.viewport,
                selection=list(view.selection),
                asker=asker,
                user_changes=changes,
            )
        note = view_note(source)
        if note is None:  # the steward's own runs (fairies) see the answering browser's view
            return replace(context, user_changes=changes)
        log.info(
            "context_not_askers_view",
            room=self.room_id,
            asker=asker,
            source=source,
            answered_by=context.source_identity,
        )
        return replace(context, selection=[], user_changes=changes, asker=None, view_note=note)

    def prefetch(
        self, bounds: Box | None = None, *, want_screenshot: bool = True, asker: str | None = None
    ) -> PrefetchOutcome:
        """Start loading the context a prompt by `asker` with `bounds` will ask for, in the
        background.

        Never raises and never degrades: a failure is logged and the prompt fetches as usual.
        """
        if self._cached(bounds, want_screenshot, asker, peek=True) is not None:
            return "cached"
        key = self._flight_key(bounds, want_screenshot, asker)
        if key in self._prefetching or key in self._fetching:
            return "in_flight"
        if not self.candidates():
            return "no_host"
        task = asyncio.ensure_future(self._prefetch(bounds, want_screenshot, asker, key))
        self._prefetching[key] = task

        def done(t: asyncio.Task[CanvasContext | None]) -> None:
            if self._prefetching.get(key) is t:
                del self._prefetching[key]
            if not t.cancelled() and t.exception() is not None:  # _prefetch catches; be sure
                log.error("context_prefetch_crashed", room=self.room_id, error=repr(t.exception()))

        task.add_done_callback(done)
        self.prefetch_stats["started"] += 1
        return "started"

    async def _prefetch(
        self, bounds: Box | None, want_screenshot: bool, asker: str | None, key: _FlightKey
    ) -> CanvasContext | None:
        started = time.monotonic()
        best = _Attempt()
        view = self._views.get(asker)
        try:
            got = await self._load(bounds, want_screenshot, asker, best)
        except Exception as err:  # never into the room: the prompt will fetch on its own
            best.errors.append(repr(err))
            got = None
        took = time.monotonic() - started
        if got is None:
            self.prefetch_stats["failed"] += 1
            metrics.CONTEXT_PREFETCH_SECONDS.labels(result="failed").observe(took)
            log.info("context_prefetch_failed", room=self.room_id, reasons=best.errors[-4:])
            return None
        context = self._context(got, bounds, degraded=False)
        context.source = "prefetched"
        self._store(
            context, bounds, want_screenshot, key[3], asker, _view_for(context, asker, view),
            prefetched=True,
        )  # fmt: skip
        self.prefetch_stats["ok"] += 1
        metrics.CONTEXT_PREFETCH_SECONDS.labels(result="ok").observe(took)
        log.info(
            "context_prefetched",
            room=self.room_id,
            participant=got.identity,
            ms=round(took * 1000, 1),
            shapes=len(context.shapes),
            image_bytes=len(context.screenshot or b""),
            image_type=context.screenshot_type if context.screenshot else None,
            stale=key[3] != self._room_version(),
        )
        return context

    async def close(self) -> None:
        """Stop running prefetches (the room is closing)."""
        tasks = list(self._prefetching.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

    async def _load(
        self, bounds: Box | None, want_screenshot: bool, asker: str | None, best: _Attempt
    ) -> _Attempt | None:
        """The first candidate's full answer, or None (reasons in `best.errors`)."""
        plan = self._plan(bounds, want_screenshot, asker)
        try:
            # One bound for all candidates and attempts: under overload each RPC can take
            # several times its own timeout, and a slow context must not eat the whole run.
            async with asyncio.timeout(self.timeout_s * TOTAL_TIMEOUTS):
                return await self._first_answer(plan, want_screenshot, best)
        except TimeoutError:
            best.errors.append(f"no answer within {self.timeout_s * TOTAL_TIMEOUTS:.1f}s")
        return None

    async def _first_answer(
        self, plan: list[_Ask], want_screenshot: bool, best: _Attempt
    ) -> _Attempt | None:
        for ask in plan:
            identity = ask.identity
            try:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(self.attempts),
                    wait=wait_exponential(multiplier=0.05, max=0.5),
                    retry=retry_if_exception(_retryable),
                    reraise=True,
                ):
                    with attempt:
                        got = await self._ask(ask, want_screenshot, best)
                self._failures.pop(identity, None)
                return got
            except ContextFailure as err:
                best.errors.append(f"{identity}: {err}")
                log.info("context_attempts_failed", room=self.room_id, participant=identity)
                self._failed(identity)
        return None

    def _failed(self, identity: str) -> None:
        """One more fetch this browser failed; at DEMOTE_AFTER in a row it is demoted."""
        count = self._failures.get(identity, 0) + 1
        self._failures[identity] = count
        if count >= DEMOTE_AFTER:
            self._failures.pop(identity, None)
            self._participants.demote(identity, DEMOTE_S)

    def _degraded(self, best: _Attempt, bounds: Box | None, started: float) -> CanvasContext:
        self.degraded_runs += 1
        context = self._context(best, bounds, degraded=True)
        log.warning(
            "context_degraded",
            room=self.room_id,
            reasons=best.errors[-4:],
            shapes=len(context.shapes),
            candidates=len(self.candidates()),
        )
        metrics.CONTEXT_SECONDS.labels(result="degraded").observe(time.monotonic() - started)
        return context

    async def _ask(self, ask: _Ask, want_screenshot: bool, best: _Attempt) -> _Attempt:
        identity, bounds = ask.identity, ask.bounds
        member = self._participants.get(identity)
        if member is None:
            raise ContextFailure("participant left")
        shot = want_screenshot and member.has("screenshot")
        want: list[ContextPart] = ["viewport", "selection", "shapes"]
        if shot:
            want.append("screenshot")
        if ask.user_changes:
            want.append("user_changes")
        request_id = uuid.uuid4().hex
        caps = {"screenshot": self.max_bytes} if self.max_bytes else {}
        futures = self._inbox.expect(request_id, identity, ["shapes", "screenshot"], caps)
        try:
            req = ContextRequest(
                request_id=request_id,
                bounds=bounds,
                max_size=self.max_size,
                max_bytes=self.max_bytes,
                want=want,
            )
            call = asyncio.ensure_future(
                self._rpc(
                    destination_identity=identity,
                    method=RPC_CONTEXT,
                    payload=req.to_wire().decode(),
                    response_timeout=self.timeout_s,
                )
            )
            self._inflight.setdefault(identity, set()).add(call)
            try:
                raw = await call
            except rtc.RpcError as err:
                raise ContextFailure(f"rpc {err.code}: {err.message}") from err
            except asyncio.CancelledError:
                if call.cancelled() and not _current_cancelling():
                    raise ContextFailure("participant left") from None
                raise
            finally:
                self._inflight.get(identity, set()).discard(call)
            reply = decode(ContextReply, raw, topic=RPC_CONTEXT, max_bytes=MAX_RPC_PAYLOAD_BYTES)
            if isinstance(reply, ProtocolError):
                self._reject(RPC_CONTEXT, identity, reply.kind, reply.reason)
                raise ContextFailure(f"bad reply: {reply}")
            if reply.request_id != request_id:
                self._reject(RPC_CONTEXT, identity, "wrong_request_id")
                raise ContextFailure("reply for another request")
            got = _Attempt(reply=reply, identity=identity)
            if best.reply is None:
                best.reply, best.identity = reply, identity
            waits = {k: futures[k] for k in ("shapes", "screenshot") if k in reply.streams}
            if not shot:
                waits.pop("screenshot", None)
            try:
                async with asyncio.timeout(self.timeout_s):
                    for kind, fut in waits.items():
                        received = await fut
                        if kind == "screenshot":
                            got.screenshot = received
                        else:
                            try:
                                got.shapes = parse_shapes(received.data)
                            except ContextFailure as err:
                                self._reject(TOPIC_CONTEXT, identity, "invalid_shapes", str(err))
                                raise
                            if best.shapes is None:
                                best.shapes = got.shapes
            except TimeoutError as err:
                missing = [k for k, f in waits.items() if not f.done()]
                raise ContextFailure(f"stream timeout: {','.join(missing)}") from err
            if shot and got.screenshot is None:
                raise ContextFailure("screenshot announced but not sent")
            return got
        finally:
            self._inbox.discard(request_id)

    def _reject(self, topic: str, sender: str, reason: str, detail: str = "") -> None:
        if self._on_reject is not None:
            self._on_reject(topic, sender, reason, detail)

    def _context(self, got: _Attempt, bounds: Box | None, *, degraded: bool) -> CanvasContext:
        reply = got.reply
        shapes = got.shapes
        shot = None if degraded else got.screenshot
        if shapes is None:
            # Text-only: the steward's own mirror is the best view of the canvas it has.
            shapes = [dict(s) for s in self._mirror.shapes.values()]
        return CanvasContext(
            viewport=reply.viewport if reply else (bounds or DEFAULT_VIEWPORT),
            selection=list(reply.selection) if reply else [],
            doc_version=reply.doc_version if reply else 0,
            shapes=shapes,
            screenshot=shot.data if shot else None,
            screenshot_type=shot.mime_type if shot else SCREENSHOT_TYPE_JPEG,
            user_changes=[dict(c) for c in (reply.user_changes or [])] if reply else [],
            degraded=degraded,
            source_identity=got.identity,
            source="degraded" if degraded else "fetched",
        )

    def _key(
        self, asker: str | None, doc_version: int, bounds: Box | None, shot: bool
    ) -> _CacheKey:
        return (asker or "", doc_version, bounds.model_dump_json() if bounds else "", shot)

    def _flight_key(self, bounds: Box | None, shot: bool, asker: str | None) -> _FlightKey:
        return (asker or "", bounds.model_dump_json() if bounds else "", shot, self._room_version())

    def _entry(self, bounds: Box | None, shot: bool, asker: str | None) -> _CacheEntry | None:
        now, version = self._clock(), self._room_version()
        for key, entry in list(self._cache.items()):
            if now - entry.at > entry.ttl_s or entry.room_version != version:
                del self._cache[key]
        for key, entry in self._cache.items():
            if key == self._key(asker, entry.context.doc_version, bounds, shot):
                return entry
        return None

    def _cached(
        self, bounds: Box | None, shot: bool, asker: str | None, *, peek: bool = False
    ) -> CanvasContext | None:
        entry = self._entry(bounds, shot, asker)
        if entry is None:
            return None
        if peek:
            return entry.context
        source: ContextSource = "prefetched" if entry.prefetched else "cached"
        changes = [] if entry.changes_served else list(entry.context.user_changes)
        entry.changes_served = True
        return replace(
            entry.context, shapes=list(entry.context.shapes), user_changes=changes, source=source
        )

    def _store(
        self,
        context: CanvasContext,
        bounds: Box | None,
        shot: bool,
        room_version: int,
        asker: str | None,
        view: tuple[Box, tuple[str, ...]] | None,
        *,
        prefetched: bool,
    ) -> None:
        """Keyed to the room's order counter when the fetch *started*: anything sent to the
        room while it ran may or may not be in the answer, so such an answer is never used."""
        key = self._key(asker, context.doc_version, bounds, shot)
        ttl = self.prefetch_ttl_s if prefetched else self.cache_ttl_s
        self._cache.pop(key, None)
        self._cache[key] = _CacheEntry(
            context, self._clock(), room_version, ttl, prefetched, view,
            changes_served=not prefetched,  # a fetch's own caller has just taken them
        )  # fmt: skip
        while len(self._cache) > MAX_CACHED:  # each holds a screenshot: keep the newest few
            del self._cache[next(iter(self._cache))]

    def viewport_changed(self, identity: str, view: ParticipantView) -> None:
        """A browser published a new viewport or selection (`canvas:viewport`).

        Answers made for that asker no longer hold when its selection changed, or, without
        bounds, when its camera moved. An answer for no asker that this browser gave for its
        own view (no bounds) no longer shows what a prompt without bounds would get."""
        for key, entry in list(self._cache.items()):
            asker, bounds = key[0], key[2]
            if asker == identity:
                stale = entry.view is None or entry.view[1] != view.selection or (
                    bounds == "" and not _same_box(entry.view[0], view.viewport)
                )  # fmt: skip
            else:
                stale = (
                    asker == ""
                    and bounds == ""
                    and entry.context.source_identity == identity
                    and not _same_box(entry.context.viewport, view.viewport)
                )
            if stale:
                del self._cache[key]


def _view_for(
    context: CanvasContext, asker: str | None, view: ParticipantView | None
) -> tuple[Box, tuple[str, ...]] | None:
    """The asker's viewport and selection an answer was made for: its own browser's reply,
    else what it had published when the fetch started."""
    if asker is not None and context.source_identity == asker:
        return context.viewport, tuple(context.selection)
    return (view.viewport, view.selection) if view is not None else None


def _same_box(a: Box, b: Box, tolerance: float = 0.5) -> bool:
    return all(abs(u - v) <= tolerance for u, v in ((a.x, b.x), (a.y, b.y), (a.w, b.w), (a.h, b.h)))


def _retryable(err: BaseException) -> bool:
    return isinstance(err, ContextFailure) and not isinstance(err, ContextRefused)


def _current_cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def parse_shapes(data: bytes) -> list[dict[str, Any]]:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as err:  # RecursionError: absurdly deep nesting
        raise ContextFailure(f"shapes JSON invalid: {err}") from err
    if not isinstance(value, list) or not all(isinstance(s, dict) for s in value):
        raise ContextFailure("shapes JSON is not a list of objects")
    return value
